package main

import (
	"context"
	"strings"
)

func isAuth(scenario string) bool { return strings.HasPrefix(scenario, "auth/") }

// authFlow runs the well-behaved OAuth client of every auth scenario.
func authFlow(ctx context.Context, scenario, url string) error {
	return listAndCall(ctx, url, "test-tool", map[string]any{})
}
