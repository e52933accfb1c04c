/* SPDX-License-Identifier: MIT */
/*
 * msgid_int.h — the Message-ID classifier's inside, for its tests: the
 * table-driven DFA alone, without the vector pass for the common form
 * (msgid.c explains both). fg_msgid_classify() must give the very same
 * answers, `why` included.
 */
#ifndef FLOODGATE_MSGID_INT_H
#define FLOODGATE_MSGID_INT_H

#include "floodgate/msgid.h"

enum fg_msgid_form fg_msgid_classify_dfa(const char *s, size_t len, enum fg_msgid_error *why);

#endif /* FLOODGATE_MSGID_INT_H */
