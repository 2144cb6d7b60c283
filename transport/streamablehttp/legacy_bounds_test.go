package streamablehttp

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	sharebus "github.com/mrtrkit/mrtrkit/share"
)

// TestLegacySubscriptionBytesBounded is the review's M2 reproduction on
// the wire: an anonymous 2025-11-25 session subscribing to huge URIs is
// refused with -32602 past the bound of one URI and past the bound of all
// its URIs together, with or without a shared bus; what it holds stays
// within the bounds, and unsubscribing makes room again.
func TestLegacySubscriptionBytesBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []mrtr.Option
	}{{"no-bus", nil}, {"bus", []mrtr.Option{mrtr.WithShare(sharebus.Local())}}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newLegacyFixture(t, tc.opts, []legacy.Option{legacy.WithMaxSubscriptionBytes(20000)})
			c := f.client(t, "")
			c.initialize(`{}`, "2025-11-25")
			id := 0
			sub := func(method, uri string) rpc {
				t.Helper()
				id++
				p, _ := json.Marshal(map[string]string{"uri": uri})
				resp, body := c.post(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `","params":` + string(p) + `}`)
				require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
				return decodeRPC(t, body)
			}
			uri := func(n int, size int) string {
				u := "test://x/" + strconv.Itoa(n) + "/"
				return u + strings.Repeat("a", size-len(u))
			}

			// The review's URIs: 3 MiB each.
			m := sub("resources/subscribe", uri(0, 3<<20))
			require.NotNil(t, m.Error)
			assert.Equal(t, int(mrtr.CodeInvalidParams), m.Error.Code)
			assert.Contains(t, m.Error.Message, "longer than 8192 bytes")
			m = sub("resources/subscribe", uri(0, legacy.MaxSubscriptionURI+1))
			require.NotNil(t, m.Error)

			for i := 1; i <= 2; i++ {
				m = sub("resources/subscribe", uri(i, legacy.MaxSubscriptionURI))
				require.Nil(t, m.Error, "URI %d", i)
			}
			m = sub("resources/subscribe", uri(1, legacy.MaxSubscriptionURI))
			assert.Nil(t, m.Error, "subscribing again to a URI takes no more room")
			m = sub("resources/subscribe", uri(3, legacy.MaxSubscriptionURI))
			require.NotNil(t, m.Error)
			assert.Equal(t, int(mrtr.CodeInvalidParams), m.Error.Code)
			assert.Contains(t, m.Error.Message, "would exceed 20000 bytes together")
			m = sub("resources/subscribe", uri(3, 20000-2*legacy.MaxSubscriptionURI))
			assert.Nil(t, m.Error, "what fits is taken")

			m = sub("resources/unsubscribe", uri(1, legacy.MaxSubscriptionURI))
			require.Nil(t, m.Error)
			m = sub("resources/subscribe", uri(4, legacy.MaxSubscriptionURI))
			assert.Nil(t, m.Error, "unsubscribing made room")
		})
	}
}
