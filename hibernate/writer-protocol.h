/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What fridged and fridge-image-writer say to each other over one stream
 * socket (the writer's: STATE_DIR/image-writer.sock). A message is one
 * line of at most WRITER_LINE_MAX bytes with its '\n': a word, then
 * key=value fields; a field named message takes the rest of the line.
 *
 *   fridged -> writer   hibernate mode=MODE       first, once (MODE: /sys/power/disk's;
 *                                                 test_resume is answered unavailable)
 *                       cancel                    at any time
 *                       check                     instead of hibernate: could it write an image
 *                                                 now? Nothing is opened or frozen for it
 *   writer -> fridged   progress done=BYTES total=BYTES
 *                       unavailable message=TEXT  nothing was frozen: the kernel's writer may go on
 *                       cancelled message=TEXT    the write stopped, user space runs again
 *                       failed message=TEXT       likewise, for a fault
 *                       resumed raw=BYTES written=BYTES usec=N
 *                                                 written, slept and restored: raw and written
 *                                                 image bytes, usec the write's time
 *                       usable path=FILE key=KEY  check's answers: the initramfs it looked at
 *                       unusable path=FILE key=KEY message=TEXT
 *                                                 (where none was found, the first place looked,
 *                                                 key "absent"; "-": none can be named) and its
 *                                                 writer_file_key() then
 *
 * Once the writer has frozen user space nobody reads the socket, so it
 * sends progress without waiting and drops a line that does not fit; a
 * cancel that fridged wrote before the freeze is still there to be read
 * after it, which is how a Cancel never loses the race with the freeze.
 * Plain C: the writer runs with user space frozen. */

#include <stddef.h>
#include <stdint.h>

#define WRITER_LINE_MAX 512u
#define WRITER_MODE_MAX 32u
#define WRITER_PATH_MAX 256u
#define WRITER_KEY_MAX 96u
#define WRITER_SOCKET_NAME "image-writer.sock"

typedef enum WriterMessageType {
        WRITER_MSG_HIBERNATE,
        WRITER_MSG_CANCEL,
        WRITER_MSG_PROGRESS,
        WRITER_MSG_UNAVAILABLE,
        WRITER_MSG_CANCELLED,
        WRITER_MSG_FAILED,
        WRITER_MSG_RESUMED,
        WRITER_MSG_CHECK,
        WRITER_MSG_USABLE,
        WRITER_MSG_UNUSABLE,
        _WRITER_MSG_MAX,
        _WRITER_MSG_INVALID = -1,
} WriterMessageType;

typedef struct WriterMessage {
        WriterMessageType type;
        char mode[WRITER_MODE_MAX];     /* hibernate */
        uint64_t done, total;           /* progress */
        uint64_t raw, written, usec;    /* resumed */
        char path[WRITER_PATH_MAX];     /* usable, unusable: no spaces */
        char key[WRITER_KEY_MAX];       /* usable, unusable */
        char message[WRITER_LINE_MAX];  /* unavailable, cancelled, failed */
} WriterMessage;

const char *writer_message_type_to_string(WriterMessageType t);

/* line without its '\n'. A refusal (-EBADMSG) says why in err: an unknown
 * word, a missing, repeated, unknown or malformed field. */
int writer_message_parse(const char *line, WriterMessage *ret, char *err, size_t errlen);

/* The line with its '\n' into buf; its length, or -ENOBUFS (the line
 * would be longer than WRITER_LINE_MAX or size) or -EINVAL (a message
 * text with a newline, a mode with a space). */
int writer_message_format(const WriterMessage *m, char *buf, size_t size);

/* What a file is now, to tell later whether it changed: device, inode,
 * size, mtime and ctime; "absent" when it does not exist, "unknown-ERRNO"
 * when it cannot be looked at. Into buf (WRITER_KEY_MAX bytes). */
void writer_file_key(const char *path, char *buf, size_t size);

/* Splits a stream into lines: feed what was read, take whole lines.
 * A line longer than WRITER_LINE_MAX is an error (-EMSGSIZE). */
typedef struct WriterLineBuffer {
        char buf[WRITER_LINE_MAX];
        size_t len;
} WriterLineBuffer;

/* Copies the next whole line (without '\n', NUL-ended) to line (at least
 * WRITER_LINE_MAX bytes) and returns 1; 0 when no whole line is buffered */
int writer_line_buffer_take(WriterLineBuffer *b, char *line);
/* Appends up to len bytes of data; returns how many it took (0 when full) */
size_t writer_line_buffer_feed(WriterLineBuffer *b, const char *data, size_t len);
