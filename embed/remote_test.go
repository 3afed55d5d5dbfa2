package embed

import "testing"

func TestHTTPError(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       HTTPError
		want      string
		retryable bool
	}{
		{"429", HTTPError{429, "slow down"}, "HTTP 429 Too Many Requests: slow down", true},
		{"500 no message", HTTPError{500, ""}, "HTTP 500 Internal Server Error", true},
		{"400", HTTPError{400, "bad"}, "HTTP 400 Bad Request: bad", false},
		{"404", HTTPError{404, ""}, "HTTP 404 Not Found", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Fatalf("Error() = %q, want %q", got, tc.want)
			}
			if tc.err.Retryable() != tc.retryable {
				t.Fatalf("Retryable() = %v", !tc.retryable)
			}
		})
	}
}
