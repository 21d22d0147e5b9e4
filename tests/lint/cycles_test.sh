#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Kyua plain test: tests/lint/cycles_check.py over the engine (common/).
exec python3 "@KINST_SRCDIR@/tests/lint/cycles_check.py" "@KINST_SRCDIR@" common
