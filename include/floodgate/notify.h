/* SPDX-License-Identifier: MIT */
/*
 * notify.h — systemd's readiness protocol (sd_notify(3)) without
 * libsystemd, for units of Type=notify.
 *
 * systemd names an AF_UNIX datagram socket in $NOTIFY_SOCKET: a path, or
 * an abstract name written with a leading '@'. A daemon sends one
 * datagram of newline-separated assignments: "READY=1" once it serves
 * (floodctld: its region published, its control socket listening),
 * "STOPPING=1" when it begins to stop. Without $NOTIFY_SOCKET (not under
 * systemd, or another Type=) there is nobody to tell and nothing is sent.
 */
#ifndef FLOODGATE_NOTIFY_H
#define FLOODGATE_NOTIFY_H

/* Send `state` to $NOTIFY_SOCKET: 0 (also when the variable is unset or
 * empty), or -errno (-EINVAL for a name that is not a socket address). */
int fg_notify(const char *state);

/* The same to an explicit socket name (a path, or "@abstract"). */
int fg_notify_to(const char *socket_name, const char *state);

#endif /* FLOODGATE_NOTIFY_H */
