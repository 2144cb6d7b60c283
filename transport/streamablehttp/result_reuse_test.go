package streamablehttp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Results are rendered into buffers the Handler hands back once written
// (mrtr.Response.Release): many concurrent calls, each answered with its
// own text, every answer carrying exactly its own.
func TestConcurrentResultsStayTheirOwn(t *testing.T) {
	f := newFixture(t)
	const workers, calls = 8, 150
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				// Texts of different lengths, so that a reused buffer that
				// held a longer answer would show through a shorter one.
				text := fmt.Sprintf("w%d-c%d-%s", w, i, strings.Repeat("x", (w*31+i)%97))
				if err := echoOnce(t, f.url, i, text); err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// echoOnce calls the echo tool with text and checks that exactly text,
// under id, comes back; safe to call from several goroutines.
func echoOnce(t *testing.T, base string, id int, text string) error {
	arg, _ := json.Marshal(map[string]string{"text": text})
	req, err := toolCall(id, "echo", string(arg)).request(t.Context(), base)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		ID     int `json:"id"`
		Result struct {
			ResultType string `json:"resultType"`
			Content    []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &env) != nil || env.ID != id ||
		env.Result.ResultType != "complete" || len(env.Result.Content) != 1 || env.Result.Content[0].Text != text {
		return fmt.Errorf("call %d (%q): status %d, body %s", id, text, resp.StatusCode, body)
	}
	return nil
}
