/* SPDX-License-Identifier: MIT */
/*
 * tbl/nic.h — the port's own figures, defined once: what the NIC (or the
 * PMD standing for one) counts, as the dataplane's main lcore reads it
 * from rte_eth_stats, the link and the port's xstats, per port and per
 * queue. The dataplane publishes them in its region slot (nic.h), floodctld
 * exports them (metrics.h): a port counter as
 * floodgate_nic_<name>_total{port="..."}, a port gauge as
 * floodgate_nic_<name>{port="..."}, a queue counter as
 * floodgate_nic_queue_<name>_total{port="...",queue="N"}.
 *
 * FG_NIC_PORT(id, name, kind, help): kind COUNTER or GAUGE.
 * FG_NIC_QUEUE(id, name, help): always a counter.
 *
 * These are the port's counts since it was started: a restarted dataplane
 * starts them again from zero (Prometheus's rate() takes a reset as one).
 *
 * No include guard: included repeatedly with different macros.
 */
#ifdef FG_NIC_PORT
FG_NIC_PORT(LINK_UP, "link_up", GAUGE, "1 while the port's link is up, 0 while it is down")
FG_NIC_PORT(LINK_SPEED, "link_speed_mbps", GAUGE, "the link's speed in Mbit/s (0: the port does not say)")
FG_NIC_PORT(LACP_STATE, "lacp_state", GAUGE, "a member of an 802.3ad bond: its LACP actor state (IEEE 802.1AX bits; 0x30, collecting and distributing, while it carries traffic); 0 for any other port")
FG_NIC_PORT(RX_PACKETS, "rx_packets", COUNTER, "frames the port received (rte_eth_stats ipackets)")
FG_NIC_PORT(RX_BYTES, "rx_bytes", COUNTER, "octets the port received (ibytes)")
FG_NIC_PORT(RX_MISSED, "rx_missed", COUNTER, "frames the port dropped because no RX descriptor was free: the workers did not keep up (imissed)")
FG_NIC_PORT(RX_NOMBUF, "rx_nombuf", COUNTER, "frames lost because no mbuf was free to receive them (rx_nombuf)")
FG_NIC_PORT(RX_ERRORS, "rx_errors", COUNTER, "erroneous frames the port received (ierrors)")
FG_NIC_PORT(TX_PACKETS, "tx_packets", COUNTER, "frames the port sent (opackets)")
FG_NIC_PORT(TX_BYTES, "tx_bytes", COUNTER, "octets the port sent (obytes)")
FG_NIC_PORT(TX_ERRORS, "tx_errors", COUNTER, "frames the port failed to send (oerrors)")
FG_NIC_PORT(TX_DROPPED, "tx_dropped", COUNTER, "frames dropped on transmit: by floodgate when a TX queue would not take them (the queues' tx_dropped summed), plus the port's own TX drop and discard xstats")
#endif

#ifdef FG_NIC_QUEUE
FG_NIC_QUEUE(RX_PACKETS, "rx_packets", "frames received on this RX queue (q_ipackets)")
FG_NIC_QUEUE(RX_BYTES, "rx_bytes", "octets received on this RX queue (q_ibytes)")
FG_NIC_QUEUE(RX_ERRORS, "rx_errors", "frames this RX queue dropped or could not receive (q_errors)")
FG_NIC_QUEUE(TX_PACKETS, "tx_packets", "frames sent on this TX queue (q_opackets)")
FG_NIC_QUEUE(TX_BYTES, "tx_bytes", "octets sent on this TX queue (q_obytes)")
FG_NIC_QUEUE(TX_DROPPED, "tx_dropped", "frames floodgate dropped because this TX queue would not take them (its worker's dp_tx_refused and net_tx_port_drop)")
#endif
