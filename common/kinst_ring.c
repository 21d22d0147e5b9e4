/* SPDX-License-Identifier: BSD-2-Clause */
#include "kinst_engine.h"
