// Package e2e is the scale-out end-to-end test: three replicas
// (redis/scaleout/replica) sharing a real redis-server behind nginx with
// round-robin balancing. It needs the processes that redis/scaleout/run.sh
// starts and describes in SCALEOUT_* variables, so its tests are built
// only with -tags scaleout, and run by the script phase by phase:
//
//	bash redis/scaleout/run.sh   # make scaleout
//
// Without those variables the test binary exits with status 2: it never
// skips.
package e2e
