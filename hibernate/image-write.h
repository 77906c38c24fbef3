/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* fridge-image-writer's write path, shared by --write (run by hand) and
 * --serve (asked by fridged): the resume device checked, the swap area
 * set, user space frozen, the image made, written (image-pipeline.c,
 * image-output.c), signature last, then what the mode says. Everything up
 * to the freeze can fail without harm: the outcome says so
 * (IMAGE_WRITE_UNAVAILABLE), and the kernel's writer may go on. After it
 * every failure leaves no signature, the swap pages and the image freed,
 * user space thawed. */

#include <stdbool.h>
#include <stdint.h>

#include "image-console.h"
#include "image-format.h"
#include "image-pipeline.h"

/* What follows a written image, as /sys/power/disk's modes would have it */
typedef enum ImageAfter {
        IMAGE_AFTER_POWEROFF, /* shutdown */
        IMAGE_AFTER_PLATFORM, /* platform: the platform's hibernation state (ACPI S4), else off */
        IMAGE_AFTER_REBOOT,   /* reboot */
        IMAGE_AFTER_SUSPEND,  /* suspend: to RAM; woken, the image is withdrawn */
        IMAGE_AFTER_UNFREEZE, /* --after=unfreeze (tests): the image left valid */
} ImageAfter;

typedef enum ImageWriteOutcome {
        IMAGE_WRITE_UNAVAILABLE, /* nothing frozen: cannot run here */
        IMAGE_WRITE_FAILED,      /* frozen, then a fault: thawed, no image */
        IMAGE_WRITE_CANCELLED,   /* Esc on the console, or fridged's cancel */
        IMAGE_WRITE_RESUMED,     /* back in the restored system (or woken from suspend) */
        IMAGE_WRITE_UNFROZEN,    /* IMAGE_AFTER_UNFREEZE: written, thawed */
} ImageWriteOutcome;

#define IMAGE_WRITE_WHY_MAX 256u

typedef struct ImageWriteJob {
        const char *resume_device;
        uint64_t resume_offset;
        const char *header_kernel;    /* tests: a header from another kernel */
        ImageConsole *console;        /* the bar, Esc, fridged's progress and cancel; or NULL */
        ImageAfter after;
} ImageWriteJob;

typedef struct ImageWriteResult {
        ImageWriteOutcome outcome;
        ImageFigures figures;         /* what this system saw of the write (none once restored) */
        char why[IMAGE_WRITE_WHY_MAX]; /* unavailable, failed, cancelled: a sentence */
} ImageWriteResult;

/* snap: the snapshot device, open O_RDONLY */
void image_write_run(int snap, const ImageWriteJob *j, ImageWriteResult *res);

/* Pieces --discard shares */
int image_write_header_init(FridgeImageHeader *h);
/* SNAPSHOT_FREEZE, SNAPSHOT_CREATE_IMAGE; *in_suspend 1 in the kernel
 * that made it, 0 when it returns in the restored one. Thawed on failure
 * (a negative errno). */
int image_write_freeze_and_create(int snap, int *in_suspend);
/* The image thrown away (swap pages too), user space thawed */
void image_write_release(int snap, bool swap_pages);
