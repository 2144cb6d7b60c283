//go:build unix

// Command hostile puts an MCP Streamable HTTP server under hostile load and
// measures how a well-behaved client fares meanwhile.
//
//	go run ./internal/cmd/hostile [-url URL] [-duration d] [-listens n] ...
//	go run ./internal/cmd/hostile -soak [-duration 10m] ...
//
// Without -url it builds the conformance fixture server
// (./conformance/server, run from the module root) into a temporary
// directory, starts it as a child process on a free 127.0.0.1 port, and
// can then read its resident set size (VmRSS) and open file descriptors
// from /proc. At the end it sends the child SIGQUIT and counts the
// goroutines in the stack dump the Go runtime writes, grouped by the
// function that created them. With -url those figures are skipped.
//
// The default mode runs, concurrently and for -duration:
//
//   - -listens subscriptions/listen attempts (default 20,000) from
//     -listen-conc workers; streams the server accepts are held open until
//     the end, refusals are counted by HTTP status;
//   - -slow clients (default 200) that send request headers with a
//     Content-Length and then one body byte every -slow-every;
//   - -nonread clients (default 200) that pipeline requests whose answers
//     are large (json_schema_2020_12_tool echoes its arguments, so a
//     -big byte argument comes back) and never read, with a small receive
//     buffer;
//   - -hold connections (default none) opened by -hold-conc workers, each
//     sending one request (-hold-method: a subscriptions/listen, or a
//     tools/list that leaves an idle keep-alive connection) and then kept
//     open whatever the answer, until the end: the load of tens of
//     thousands of clients that hold connections after being refused.
//     They connect from 127.0.0.<-hold-from> onwards, spread over
//     -hold-addrs addresses (so that they run out of neither ephemeral
//     ports nor peers), and only to a loopback target; the summary counts
//     the answers by status, the connections the server closed and those
//     still open, and the server's own connection-cap counts (the
//     fixture's -debug-addr /conns);
//   - one well-behaved client calling tools/call (test_simple_text), or
//     tools/list with -good-method tools/list, every 100 ms, whose
//     latencies are reported as p50, p99 and max, with where the slowest
//     call's time went (opening a connection, or waiting for the answer
//     after the request was written).
//
// The well-behaved client stands for a separate client on a machine of
// its own. It connects from 127.0.0.2 when the target is 127.0.0.1
// (-good-from), so that the server counts it as a peer of its own rather
// than a share of the attackers' (anonymous callers' limits count per
// peer address). It runs in a process of its own (-good-apart, the
// default), and once it and the server have started, this process lowers
// its own scheduling priority to nice 10 (-attack-nice): on a machine
// where the load generator runs beside the server, the hostile clients'
// CPU would otherwise be taken from the server and from the measuring
// client, which is not what an attacker elsewhere costs them. Neither
// changes what the hostile clients send. On a machine shared with other
// work, -server-nice and -good-nice (negative, as root) put the server and
// the well-behaved client ahead of it. -good-apart=false -attack-nice=0
// -good-from=any measures as earlier versions did. -listen-rate paces the
// listen attempts (default: as fast as the workers go).
//
// Progress lines (every -progress) and the summary give the CPU used by
// the server, by this process and by everything else on the machine
// (from /proc/stat), overall and while the listen attempts ran, and the
// machine's count of connections dropped by full listen queues.
//
// With -soak it runs steady mixed load for -duration instead: workers
// calling tools/call, completing a multi-round MRTR call (three requests,
// test_input_required_result_multi_round) and opening, holding and
// closing listen streams, next to a smaller share of slow, non-reading and
// listen-flooding clients, and -hold holders that open another connection
// -hold-again after the server closes theirs. RSS, descriptors and the goroutine count (the
// fixture's -debug-addr, which the soak passes it) are sampled every
// -sample; the summary gives the well-behaved request count, 5xx answers
// and lost answers (requests that got no JSON-RPC answer), and the series
// after -warmup. The exit status is 1 when a well-behaved request got a
// 5xx or no answer.
//
// All traffic goes to 127.0.0.1 (or -url). Every loop is bounded by the
// run's duration and by counts. The process raises its soft
// RLIMIT_NOFILE to the hard limit at start, and the child inherits it.
package main
