package wire

import (
	"fmt"
	"slices"
	"strings"
)

// BridgedVersions are the protocol versions of the initialize era that
// the bridge (package mrtr/legacy) serves.
var BridgedVersions = []string{"2025-11-25", "2025-06-18"}

// UnbridgedVersion returns an error naming the first of listed (a
// description's LegacyVersions) that the bridge does not serve, prefixed
// with pkg, or nil when it serves them all.
func UnbridgedVersion(pkg string, listed []string) error {
	for _, v := range listed {
		if !slices.Contains(BridgedVersions, v) {
			return fmt.Errorf("%s: the server's description lists LegacyVersions %q, which nothing here serves: "+
				"the bridge (package mrtr/legacy) serves %s; remove it from the description", pkg, v, strings.Join(BridgedVersions, " and "))
		}
	}
	return nil
}
