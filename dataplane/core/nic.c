/* SPDX-License-Identifier: MIT */
/*
 * nic.c — names, help texts and kinds of the port's figures (tbl/nic.h).
 */
#include "floodgate/nic.h"

static const char *const port_names[] = {
#define FG_NIC_PORT(id, name, kind, help) [FG_NIC_##id] = name,
#include "floodgate/tbl/nic.h"
#undef FG_NIC_PORT
};

static const char *const port_helps[] = {
#define FG_NIC_PORT(id, name, kind, help) [FG_NIC_##id] = help,
#include "floodgate/tbl/nic.h"
#undef FG_NIC_PORT
};

static const enum fg_nic_kind port_kinds[] = {
#define FG_NIC_PORT(id, name, kind, help) [FG_NIC_##id] = FG_NIC_##kind,
#include "floodgate/tbl/nic.h"
#undef FG_NIC_PORT
};

static const char *const queue_names[] = {
#define FG_NIC_QUEUE(id, name, help) [FG_NICQ_##id] = name,
#include "floodgate/tbl/nic.h"
#undef FG_NIC_QUEUE
};

static const char *const queue_helps[] = {
#define FG_NIC_QUEUE(id, name, help) [FG_NICQ_##id] = help,
#include "floodgate/tbl/nic.h"
#undef FG_NIC_QUEUE
};

const char *fg_nic_name(enum fg_nic_port_ctr c)
{
	return (unsigned)c < FG_NIC__COUNT ? port_names[c] : NULL;
}

const char *fg_nic_help(enum fg_nic_port_ctr c)
{
	return (unsigned)c < FG_NIC__COUNT ? port_helps[c] : NULL;
}

enum fg_nic_kind fg_nic_kind(enum fg_nic_port_ctr c)
{
	return (unsigned)c < FG_NIC__COUNT ? port_kinds[c] : FG_NIC_COUNTER;
}

const char *fg_nicq_name(enum fg_nic_queue_ctr c)
{
	return (unsigned)c < FG_NICQ__COUNT ? queue_names[c] : NULL;
}

const char *fg_nicq_help(enum fg_nic_queue_ctr c)
{
	return (unsigned)c < FG_NICQ__COUNT ? queue_helps[c] : NULL;
}

const char *fg_nic_role_name(uint32_t role)
{
	return role == FG_NIC_ROLE_MEMBER ? "member" : "port";
}
