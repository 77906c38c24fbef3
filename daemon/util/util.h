/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"

/* Turns a negative errno into "Device or resource busy": thread-safe. */
const char *errno_text(int negative_errno);
