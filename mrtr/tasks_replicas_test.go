package mrtr_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/share"
	"github.com/mrtrkit/mrtrkit/state"
)

// deployment builds n replicas sharing bus, key rings and audience, and
// returns a client of each for principal alice.
func deployment(t *testing.T, n int, bus func(i int) share.Bus, opts ...mrtr.TasksOption) []*wireClient {
	t.Helper()
	taskCodec := testkit.Codec(t, state.WithPurpose("task"), state.WithTTL(2*time.Hour))
	var clients []*wireClient
	for i := range n {
		srvOpts := []mrtr.Option{mrtr.WithCodec(testkit.Codec(t)), mrtr.WithAudience("https://tasks.example.test/mcp")}
		_, client := taskReplica(t, srvOpts, append([]mrtr.TasksOption{mrtr.TaskBus(bus(i)), mrtr.TaskCodec(taskCodec)}, opts...)...)
		clients = append(clients, client("alice"))
	}
	return clients
}

func TestTasksAcrossReplicas(t *testing.T) {
	bus := share.Local()
	r := deployment(t, 4, func(int) share.Bus { return bus })

	// Created on one replica, polled on a second, answered on a third.
	id := r[0].call("tools/call", capsTasks, obj{"name": "confirm"}).str("taskId")
	require.NotEmpty(t, id)
	require.Nil(t, r[1].call(mrtr.MethodTasksGet, capsTasks, obj{"taskId": id}).Error, "durable before sent, on every replica")
	g := waitStatus(t, r[1], id, mrtr.TaskInputRequired)
	assert.Contains(t, string(g.Result["inputRequests"]), "r1/confirm")
	u := r[2].call(mrtr.MethodTasksUpdate, capsTasks, obj{"taskId": id, "inputResponses": obj{"r1/confirm": obj{"action": "accept", "content": obj{"confirm": "y"}}}})
	require.Nil(t, u.Error)
	g = waitStatus(t, r[1], id, mrtr.TaskCompleted)
	assert.Contains(t, string(g.Result["result"]), "answered accept")

	// Another task, running on the first replica, cancelled from a fourth.
	id = r[0].call("tools/call", capsTasks, obj{"name": "slow", "arguments": obj{"ms": 60000}}).str("taskId")
	waitStatus(t, r[3], id, mrtr.TaskWorking)
	require.Nil(t, r[3].call(mrtr.MethodTasksCancel, capsTasks, obj{"taskId": id}).Error)
	waitStatus(t, r[2], id, mrtr.TaskCancelled)

	// Partial answers on different replicas: the last one resumes it.
	id = r[1].call("tools/call", capsTasks, obj{"name": "multi"}).str("taskId")
	waitStatus(t, r[0], id, mrtr.TaskInputRequired)
	r[2].call(mrtr.MethodTasksUpdate, capsTasks, obj{"taskId": id, "inputResponses": obj{"r1/first": obj{"action": "accept", "content": obj{"name": "x"}}}})
	g = r[0].call(mrtr.MethodTasksGet, capsTasks, obj{"taskId": id})
	assert.Equal(t, mrtr.TaskInputRequired, g.str("status"))
	assert.NotContains(t, string(g.Result["inputRequests"]), "r1/first")
	r[3].call(mrtr.MethodTasksUpdate, capsTasks, obj{"taskId": id, "inputResponses": obj{"r1/second": obj{"action": "accept", "content": obj{"name": "y"}}}})
	g = waitStatus(t, r[0], id, mrtr.TaskCompleted)
	assert.Contains(t, string(g.Result["result"]), "x+y")
}

// partitioned is a bus a replica that stopped would leave behind: its
// lease renewals and everything after cut are lost.
type partitioned struct {
	share.Bus
	cut atomic.Bool
}

func (p *partitioned) Put(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	if p.cut.Load() {
		return nil
	}
	return p.Bus.Put(ctx, key, v, ttl)
}

func TestTaskOfAStoppedReplicaIsTakenOver(t *testing.T) {
	bus := share.Local()
	dead := &partitioned{Bus: bus}
	r := deployment(t, 2, func(i int) share.Bus {
		if i == 0 {
			return dead
		}
		return bus
	}, mrtr.TaskLease(60*time.Millisecond))

	// The task runs on replica 0, which then stops renewing (and
	// writing): its run would never be recorded.
	id := r[0].call("tools/call", capsTasks, obj{"name": "slow", "arguments": obj{"ms": 400}}).str("taskId")
	require.NotEmpty(t, id)
	dead.cut.Store(true)
	// Within the lease, the task is working and stays with its replica.
	g := r[1].call(mrtr.MethodTasksGet, capsTasks, obj{"taskId": id})
	assert.Equal(t, mrtr.TaskWorking, g.str("status"))
	// After it, replica 1 claims it and runs the handler again from its
	// last journal: the documented outcome is a completed task.
	time.Sleep(100 * time.Millisecond)
	g = waitStatus(t, r[1], id, mrtr.TaskCompleted)
	assert.True(t, strings.Contains(string(g.Result["result"]), "slept 400"))
}
