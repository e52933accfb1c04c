/* SPDX-License-Identifier: MIT */
/*
 * ackrule.c — the decision table of end-to-end acknowledgement
 * (ackrule.h has it in steps; relay.h the contract it serves).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/ackrule.h"

static uint8_t bit(unsigned d)
{
	return (uint8_t)(1u << d);
}

void fg_ackrule_spill(struct fg_ackrule_marks *m, unsigned d, enum fg_counter cause)
{
	if ((m->final | m->spill) & bit(d))
		return;
	if (!m->spill)
		m->cause = (uint16_t)cause;
	m->spill |= bit(d);
}

enum fg_counter fg_ackrule_code_counter(int code)
{
	return code == 239 ? FG_CTR_RELAY_ACCEPTED :
	       code == 439 ? FG_CTR_RELAY_REFUSED_439 :
	       code == 431 || code == 436 ? FG_CTR_RELAY_DEFERRED :
					    FG_CTR_RELAY_PROTOCOL_ERRORS;
}

void fg_ackrule_answer(struct fg_ackrule_marks *m, unsigned d, int code, uint8_t ack_mask)
{
	if (code == 239 || code == 439) {
		m->final |= bit(d);
		if (ack_mask & bit(d)) {
			if (code == 239)
				m->accepted |= bit(d);
			else
				m->refused |= bit(d);
		}
		return;
	}
	fg_ackrule_spill(m, d, FG_CTR_RELAY_ACK_SPILL_REFUSED);
}

void fg_ackrule_checked(struct fg_ackrule_marks *m, int code)
{
	m->checking = false;
	m->check_done = true;
	m->confirmed = code == 438;
}

int fg_ackrule_decide(struct fg_ackrule_marks *m, uint8_t ack_mask, bool late)
{
	uint8_t open = m->want & (uint8_t)~(m->final | m->spill);

	if ((m->checking || open) && !late)
		return FG_ACKRULE_WAIT;
	for (unsigned d = 0; d < 8; d++)
		if (open & bit(d))
			fg_ackrule_spill(m, d, FG_CTR_RELAY_ACK_SPILL_TIMEOUT);
	if (m->accepted)
		return m->spill ? FG_RELAY_ACK_SPILL : FG_RELAY_ACK_ACCEPTED;
	if (m->refused && !(m->spill & ack_mask)) {
		if (!m->check_done && !m->checking && !late)
			return FG_ACKRULE_CHECK;
		return m->confirmed ? FG_RELAY_ACK_REFUSED : FG_RELAY_ACK_REFUSED_FORGET;
	}
	if (!m->spill)
		m->spill = m->want & ack_mask;
	return FG_RELAY_ACK_SPILL;
}

void fg_ackrule_count(const struct fg_ackrule_marks *m, int what, struct fg_stats *st)
{
	if (!st)
		return;
	switch (what) {
	case FG_RELAY_ACK_SPILL:
		fg_stats_inc(st, (enum fg_counter)m->cause);
		break;
	case FG_RELAY_ACK_ACCEPTED:
		fg_stats_inc(st, FG_CTR_RELAY_ACK_ACCEPTED);
		break;
	case FG_RELAY_ACK_REFUSED:
		fg_stats_inc(st, FG_CTR_RELAY_ACK_REMEMBERED);
		/* fall through */
	case FG_RELAY_ACK_REFUSED_FORGET:
		fg_stats_inc(st, FG_CTR_RELAY_ACK_REFUSED);
		break;
	default:
		break;
	}
}

int fg_ackrule_art_take(struct fg_ackrule_art *a, const struct fg_relay_ack_art *src)
{
	if (src->id_len == 0 || src->id_len > FG_QUEUE_ID_MAX)
		return -EINVAL;
	if (a->cappiece < src->npiece) {
		unsigned cap = FG_MAX(src->npiece, FG_MAX(2 * a->cappiece, 64u));
		struct fg_iov *v = realloc(a->piece, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		a->piece = v;
		a->cappiece = cap;
	}
	memcpy(a->piece, src->piece, src->npiece * sizeof(*a->piece));
	a->npiece = src->npiece;
	a->octets = 0;
	for (unsigned k = 0; k < src->npiece; k++)
		a->octets += src->piece[k].len;
	a->cookie = src->cookie;
	a->ctx = src->ctx;
	a->deadline_ns = src->deadline_ns;
	a->id_len = (uint8_t)src->id_len;
	memcpy(a->id, src->id, src->id_len);
	a->id[src->id_len] = '\0';
	return 0;
}

void fg_ackrule_art_free(struct fg_ackrule_art *a)
{
	free(a->piece);
	a->piece = NULL;
	a->cappiece = a->npiece = 0;
}
