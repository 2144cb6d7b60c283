package mrtr

import "context"

// SamplingFunc answers a server's sampling/createMessage request on the
// client side. The same function value plugs into the test kit
// (mrtrtest.OnSampling) and the real client (client.OnSampling), so a
// handler written once serves tests and real calls.
type SamplingFunc func(ctx context.Context, req *SamplingRequest) (*SamplingResult, error)

// ElicitFunc answers a server's elicitation/create request on the client
// side (mrtrtest.OnElicitation, client.OnElicitation).
type ElicitFunc func(ctx context.Context, req *ElicitRequest) (*ElicitResult, error)

// RootsFunc answers a server's roots/list request on the client side
// (mrtrtest.OnRoots, client.OnRoots).
type RootsFunc func(ctx context.Context) (*RootsResult, error)
