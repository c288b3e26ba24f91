package rwq

import (
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestParseRedisURL(t *testing.T) {
	o := must[*redis.UniversalOptions](t)(ParseRedisURL("rediss://worker:s3cret@cache.internal:6380/2?client_name=billing&dial_timeout=2s"))
	if o.MaxRetries != -1 || o.Addrs[0] != "cache.internal:6380" || o.DB != 2 || o.Username != "worker" ||
		o.Password != "s3cret" || o.ClientName != "billing" || o.TLSConfig == nil || o.DialTimeout.String() != "2s" {
		t.Fatalf("options %+v", o)
	}
	for _, bad := range []string{"http://worker:s3cret@host:6379", "redis://worker:s3cret@host:port", "redis://worker:s3cret@host:6379/x"} {
		_, err := ParseRedisURL(bad)
		if !errors.Is(err, ErrInvalidArgument) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v (want INVALID_ARGUMENT, without the password)", strings.ReplaceAll(bad, "s3cret", "***"), err)
		}
	}
}
