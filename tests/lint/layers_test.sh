#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Kyua plain test: tests/lint/layers_check.py over the source tree.
exec python3 "@KINST_SRCDIR@/tests/lint/layers_check.py" "@KINST_SRCDIR@"
