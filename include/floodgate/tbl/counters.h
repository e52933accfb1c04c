/* SPDX-License-Identifier: MIT */
/*
 * tbl/counters.h — every counter floodgate keeps, defined once.
 *
 * FG_COUNTER(id, name, help): `id` becomes FG_CTR_<id>; `name` is the
 * exported metric's stem (exported as floodgate_<name>_total), `help` its
 * HELP text. Counters are per-lcore (or per-thread) plain uint64 increments,
 * summed by the reader (VPP vlib/counter.h, Linux snmp.h): no atomics.
 *
 * Reject reasons are a table of their own (tbl/reasons.h); commands by verb
 * and responses by code are tables in the session engine. Each component
 * keeps its counters in its own section below, so additions do not collide.
 *
 * No include guard: included repeatedly with different FG_COUNTER.
 */

/* ---- rules (admission decisions) ---- */
FG_COUNTER(RULES_ACCEPTED, "rules_accepted", "articles the rules accepted")
FG_COUNTER(RULES_REJECTED, "rules_rejected", "articles the rules rejected (by reason in floodgate_rejected_total)")
FG_COUNTER(RULES_DATE_FROM_INJECTION, "rules_date_from_injection_date", "decisions that used Injection-Date as the article date")
FG_COUNTER(RULES_DATE_FROM_DATE, "rules_date_from_date", "decisions that used Date as the article date (no Injection-Date)")
FG_COUNTER(RULES_OFFERS_WANTED, "rules_offers_wanted", "offers (CHECK, IHAVE) the rules found wanted before the article")
FG_COUNTER(RULES_OFFERS_REFUSED, "rules_offers_refused", "offers the rules refused before the article (by reason in floodgate_rejected_total)")

/* ---- history ---- */

/* ---- nntp session engine ---- */

/* ---- tcp / net ---- */
FG_COUNTER(NET_RX_FRAMES, "net_rx_frames", "frames received")
FG_COUNTER(NET_RX_BYTES, "net_rx_bytes", "bytes of frames received")
FG_COUNTER(NET_RX_RUNT, "net_rx_runt", "frames dropped: shorter than their headers say")
FG_COUNTER(NET_RX_NOT_OURS, "net_rx_not_ours", "frames dropped: destination MAC neither ours nor broadcast/multicast")
FG_COUNTER(NET_RX_ETHERTYPE, "net_rx_ethertype", "frames dropped: ethertype not IPv4 or ARP")
FG_COUNTER(NET_RX_IPV6, "net_rx_ipv6", "IPv6 frames dropped (IPv6 is not implemented)")
FG_COUNTER(NET_ARP_RX, "net_arp_rx", "ARP packets received")
FG_COUNTER(NET_ARP_BAD, "net_arp_bad", "ARP packets dropped: malformed or not Ethernet/IPv4")
FG_COUNTER(NET_ARP_REPLIES, "net_arp_replies", "ARP replies sent for our addresses")
FG_COUNTER(NET_ARP_REQUESTS, "net_arp_requests", "ARP requests sent to resolve a peer")
FG_COUNTER(NET_ARP_LEARNED, "net_arp_learned", "peer MAC cache entries written")
FG_COUNTER(NET_IP_RX, "net_ip_rx", "IPv4 packets received")
FG_COUNTER(NET_IP_BAD, "net_ip_bad", "IPv4 packets dropped: bad version, header length or total length")
FG_COUNTER(NET_IP_BAD_CSUM, "net_ip_bad_csum", "IPv4 packets dropped: header checksum wrong")
FG_COUNTER(NET_IP_NOT_OURS, "net_ip_not_ours", "IPv4 packets dropped: destination not one of our addresses")
FG_COUNTER(NET_IP_FRAGMENT, "net_ip_fragment", "IPv4 fragments dropped (reassembly is not implemented)")
FG_COUNTER(NET_IP_OPTIONS, "net_ip_options", "IPv4 packets with options (skipped, processed)")
FG_COUNTER(NET_IP_PROTO, "net_ip_proto", "IPv4 packets dropped: protocol not TCP or ICMP")
FG_COUNTER(NET_ICMP_ECHO, "net_icmp_echo", "ICMP echo requests answered")
FG_COUNTER(NET_ICMP_DROP, "net_icmp_drop", "ICMP messages dropped: not echo request, or bad checksum")
FG_COUNTER(NET_TX_FRAMES, "net_tx_frames", "frames handed to the port")
FG_COUNTER(NET_TX_BYTES, "net_tx_bytes", "bytes of frames handed to the port")
FG_COUNTER(NET_TX_NOBUF, "net_tx_nobuf", "frames not sent: no TX buffer free")
FG_COUNTER(NET_TX_PORT_DROP, "net_tx_port_drop", "frames the port could not send")
FG_COUNTER(NET_FAULT_RX_DROP, "net_fault_rx_drop", "fault knob: received TCP segments dropped")
FG_COUNTER(NET_FAULT_RX_DUP, "net_fault_rx_dup", "fault knob: received TCP segments duplicated")
FG_COUNTER(NET_FAULT_RX_REORDER, "net_fault_rx_reorder", "fault knob: received TCP segments held behind the next")
FG_COUNTER(NET_FAULT_TX_DROP, "net_fault_tx_drop", "fault knob: transmitted TCP segments dropped")
FG_COUNTER(NET_FAULT_TX_DUP, "net_fault_tx_dup", "fault knob: transmitted TCP segments duplicated")
FG_COUNTER(NET_FAULT_TX_REORDER, "net_fault_tx_reorder", "fault knob: transmitted TCP segments held behind the next")
FG_COUNTER(TCP_RX_SEGS, "tcp_rx_segs", "TCP segments received")
FG_COUNTER(TCP_RX_BAD, "tcp_rx_bad", "TCP segments dropped: header too short or data offset wrong")
FG_COUNTER(TCP_RX_BAD_CSUM, "tcp_rx_bad_csum", "TCP segments dropped: checksum wrong")
FG_COUNTER(TCP_RX_BYTES, "tcp_rx_bytes", "TCP payload bytes accepted in order")
FG_COUNTER(TCP_RX_NO_CONN, "tcp_rx_no_conn", "segments for no connection and no listener (answered with RST unless RST)")
FG_COUNTER(TCP_RX_OUT_OF_WINDOW, "tcp_rx_out_of_window", "segments dropped: not acceptable (RFC 9293 3.10.7.4), answered with an ACK")
FG_COUNTER(TCP_RX_DUP_DATA, "tcp_rx_dup_data", "segments whose data was all received before")
FG_COUNTER(TCP_RX_OOO, "tcp_rx_ooo", "segments queued out of order")
FG_COUNTER(TCP_RX_OOO_FULL, "tcp_rx_ooo_full", "segments dropped: out-of-order queue full")
FG_COUNTER(TCP_RX_SEGS_FULL, "tcp_rx_segs_full", "segments dropped: per-connection or total segment descriptors exhausted")
FG_COUNTER(TCP_RX_AFTER_CLOSE, "tcp_rx_after_close", "payload bytes discarded after the app closed")
FG_COUNTER(TCP_RX_BAD_ACK, "tcp_rx_bad_ack", "segments dropped: ACK of data never sent (challenge ACK sent)")
FG_COUNTER(TCP_RX_RST_BAD_SEQ, "tcp_rx_rst_bad_seq", "RSTs ignored or challenged: sequence number not exactly RCV.NXT (RFC 5961 3)")
FG_COUNTER(TCP_RX_SYN_IN_WINDOW, "tcp_rx_syn_in_window", "SYNs on a synchronized connection (challenge ACK, RFC 5961 4)")
FG_COUNTER(TCP_RX_NO_ACK, "tcp_rx_no_ack", "segments dropped: no ACK flag on a synchronized connection")
FG_COUNTER(TCP_CHALLENGE_ACKS, "tcp_challenge_acks", "challenge ACKs sent (RFC 5961)")
FG_COUNTER(TCP_DUP_ACKS, "tcp_dup_acks", "duplicate ACKs received")
FG_COUNTER(TCP_SYN_RX, "tcp_syn_rx", "SYNs received on a listener")
FG_COUNTER(TCP_SYN_BACKLOG_FULL, "tcp_syn_backlog_full", "SYNs beyond the total SYN backlog")
FG_COUNTER(TCP_SYN_PEER_FULL, "tcp_syn_peer_full", "SYNs beyond the per-peer SYN backlog")
FG_COUNTER(TCP_SYN_DROPPED, "tcp_syn_dropped", "SYNs dropped (backlog full and SYN cookies off)")
FG_COUNTER(TCP_SYNCOOKIES_SENT, "tcp_syncookies_sent", "SYN-ACKs sent with a SYN cookie")
FG_COUNTER(TCP_SYNCOOKIES_OK, "tcp_syncookies_ok", "connections opened from a valid SYN cookie")
FG_COUNTER(TCP_SYNCOOKIES_BAD, "tcp_syncookies_bad", "ACKs to a listener with an invalid or stale cookie (RST sent)")
FG_COUNTER(TCP_SYNACK_RETRANS, "tcp_synack_retrans", "SYN-ACKs retransmitted")
FG_COUNTER(TCP_SYN_RCVD_TIMEOUT, "tcp_syn_rcvd_timeout", "half-open connections dropped after the last SYN-ACK retransmission")
FG_COUNTER(TCP_POOL_EMPTY, "tcp_pool_empty", "connections refused: no connection block free (RST sent)")
FG_COUNTER(TCP_APP_REFUSED, "tcp_app_refused", "connections the app refused at accept (RST sent)")
FG_COUNTER(TCP_ACCEPTED, "tcp_accepted", "connections handed to the app")
FG_COUNTER(TCP_TW_REUSED, "tcp_tw_reused", "TIME_WAIT blocks reopened by a new SYN (RFC 9293 3.10.7.4)")
FG_COUNTER(TCP_TW_RECYCLED, "tcp_tw_recycled", "TIME_WAIT blocks taken for a new connection when the pool was empty")
FG_COUNTER(TCP_TO_SYN_RCVD, "tcp_to_syn_rcvd", "transitions into SYN-RECEIVED")
FG_COUNTER(TCP_TO_ESTABLISHED, "tcp_to_established", "transitions into ESTABLISHED")
FG_COUNTER(TCP_TO_CLOSE_WAIT, "tcp_to_close_wait", "transitions into CLOSE-WAIT")
FG_COUNTER(TCP_TO_LAST_ACK, "tcp_to_last_ack", "transitions into LAST-ACK")
FG_COUNTER(TCP_TO_FIN_WAIT_1, "tcp_to_fin_wait_1", "transitions into FIN-WAIT-1")
FG_COUNTER(TCP_TO_FIN_WAIT_2, "tcp_to_fin_wait_2", "transitions into FIN-WAIT-2")
FG_COUNTER(TCP_TO_CLOSING, "tcp_to_closing", "transitions into CLOSING")
FG_COUNTER(TCP_TO_TIME_WAIT, "tcp_to_time_wait", "transitions into TIME-WAIT")
FG_COUNTER(TCP_TO_CLOSED, "tcp_to_closed", "transitions into CLOSED (block freed)")
FG_COUNTER(TCP_CLOSE_FIN, "tcp_close_fin", "connections ended in order (FIN both ways)")
FG_COUNTER(TCP_CLOSE_RST, "tcp_close_rst", "connections reset by the peer")
FG_COUNTER(TCP_CLOSE_TIMEOUT, "tcp_close_timeout", "connections aborted: retransmissions exhausted")
FG_COUNTER(TCP_CLOSE_IDLE, "tcp_close_idle", "connections aborted: idle timeout")
FG_COUNTER(TCP_CLOSE_ERROR, "tcp_close_error", "connections aborted: local error")
FG_COUNTER(TCP_CLOSE_APP_ABORT, "tcp_close_app_abort", "connections the app aborted (RST sent)")
FG_COUNTER(TCP_TX_SEGS, "tcp_tx_segs", "TCP segments sent")
FG_COUNTER(TCP_TX_DATA_SEGS, "tcp_tx_data_segs", "TCP segments sent carrying data")
FG_COUNTER(TCP_TX_BYTES, "tcp_tx_bytes", "TCP payload bytes sent (retransmissions included)")
FG_COUNTER(TCP_TX_ACKS, "tcp_tx_acks", "pure ACKs sent")
FG_COUNTER(TCP_TX_DELAYED_ACKS, "tcp_tx_delayed_acks", "ACKs sent by the delayed-ACK timer")
FG_COUNTER(TCP_TX_RST, "tcp_tx_rst", "RSTs sent")
FG_COUNTER(TCP_TX_NOBUF, "tcp_tx_nobuf", "segments not built: no TX buffer")
FG_COUNTER(TCP_TX_ZERO_WINDOW, "tcp_tx_zero_window", "segments sent advertising a zero window")
FG_COUNTER(TCP_TX_WINDOW_UPDATES, "tcp_tx_window_updates", "window updates sent after the app released data")
FG_COUNTER(TCP_SEND_FULL, "tcp_send_full", "app sends cut short by a full send buffer")
FG_COUNTER(TCP_RTO_EXPIRED, "tcp_rto_expired", "retransmission timeouts (RFC 6298 5.4)")
FG_COUNTER(TCP_RETRANS_SEGS, "tcp_retrans_segs", "segments retransmitted (timeout, fast retransmit, recovery)")
FG_COUNTER(TCP_FAST_RETRANS, "tcp_fast_retrans", "fast retransmits on three duplicate ACKs (RFC 5681 3.2)")
FG_COUNTER(TCP_PERSIST_PROBES, "tcp_persist_probes", "zero-window probes sent (persist timer)")
FG_COUNTER(TCP_RTT_SAMPLES, "tcp_rtt_samples", "RTT samples taken (RFC 6298, Karn's rule)")
FG_COUNTER(TCP_PASSIVE_OPENS, "tcp_passive_opens", "passive mode: client streams followed from their SYN")
FG_COUNTER(TCP_PASSIVE_PICKUPS, "tcp_passive_pickups", "passive mode: client streams picked up mid-way (no SYN seen)")

/* ---- control plane: journal, snapshots, expiry ---- */
FG_COUNTER(JOURNAL_RING_FULL, "journal_ring_full", "journal records a writer could not place because its ring was full (it deferred the article)")
FG_COUNTER(JOURNAL_RECORDS, "journal_records", "history records appended to the journal")
FG_COUNTER(JOURNAL_BLOCKS, "journal_blocks", "checksummed blocks appended to the journal")
FG_COUNTER(JOURNAL_BYTES, "journal_bytes", "octets appended to journal segments")
FG_COUNTER(JOURNAL_COMMITS, "journal_commits", "group commits (fdatasync of the journal)")
FG_COUNTER(JOURNAL_SEGMENTS, "journal_segments", "journal segment files started")
FG_COUNTER(JOURNAL_ERRORS, "journal_errors", "journal write or sync failures (retried; records stay in the rings)")
FG_COUNTER(SEGMENTS_PRUNED, "journal_segments_pruned", "journal segments deleted because a kept snapshot covers them")
FG_COUNTER(SNAPSHOTS, "snapshots", "snapshots written")
FG_COUNTER(SNAPSHOT_FAILURES, "snapshot_failures", "snapshot writes that failed")
FG_COUNTER(SNAPSHOTS_PRUNED, "snapshots_pruned", "old snapshots deleted (snapshot-keep)")
FG_COUNTER(EXPIRY_PASSES, "expiry_passes", "completed expiry sweeps of the whole history")
FG_COUNTER(VLOG_LINES, "verdict_log_lines", "verdict-log lines written to files")
FG_COUNTER(VLOG_DROPPED, "verdict_log_dropped", "verdict-log lines dropped (ring full, or writer gone first)")
FG_COUNTER(VLOG_ROTATIONS, "verdict_log_rotations", "verdict-log file rotations")
FG_COUNTER(WRITERS_REAPED, "writers_reaped", "writer slots freed by floodctld after their writer died or left")
FG_COUNTER(CTL_REQUESTS, "control_requests", "requests on the control socket")
FG_COUNTER(CTL_ERRORS, "control_errors", "control requests answered with an error")
FG_COUNTER(HTTP_REQUESTS, "http_requests", "requests to the stats HTTP endpoint")
FG_COUNTER(CONFIG_RELOADS, "config_reloads", "configuration reloads applied")
FG_COUNTER(CONFIG_RELOAD_FAILURES, "config_reload_failures", "configuration reloads refused (the running configuration was kept)")

/* ---- relay and outbound queue ---- */

/* ---- dataplane (DPDK ports, lcores) ---- */
