package rwq

import (
	"errors"
	"testing"
)

type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// A MOVED or ASK reply is the only error after which a script may be sent again: the node did
// not run it. Anything else (a lost connection above all) must surface, never be retried.
func TestRedirectedOnlyForMovedAndAsk(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{replyError("MOVED 3999 127.0.0.1:6381"), true},
		{replyError("ASK 3999 127.0.0.1:6381"), true},
		{replyError("ERR MOVED"), false},
		{replyError("CLUSTERDOWN The cluster is down"), false},
		{errors.New("MOVED 3999 127.0.0.1:6381"), false}, // not a server reply
		{errors.New("read tcp: connection reset by peer"), false},
		{nil, false},
	} {
		if got := redirected(c.err); got != c.want {
			t.Errorf("redirected(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
