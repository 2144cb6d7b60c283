// Package scaleout runs the go-sdk client pinned to MCP 2025-11-25
// against the scale-out deployment of redis/scaleout/run.sh: three
// replicas sharing Redis behind nginx with round-robin balancing and no
// affinity. Its test is built only with -tags scaleout and run by that
// script, which describes the deployment in SCALEOUT_* variables; without
// them the test binary exits with status 2 (it never skips).
package scaleout
