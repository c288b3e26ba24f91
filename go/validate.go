package rwq

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of SPEC §4.
const (
	MaxIDBytes    = 512
	MaxTokenBytes = 128
	MaxBatch      = 1000
	MaxDurationMs = int64(31_536_000_000)
)

func quote(id string) string { return strconv.Quote(id) }

func checkID(id string) error {
	if len(id) < 1 || len(id) > MaxIDBytes {
		return invalid(fmt.Sprintf("id must be 1..%d bytes, got %d", MaxIDBytes, len(id)))
	}
	return nil
}

func checkNewID(id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	if !utf8.ValidString(id) {
		return invalid("id must be valid UTF-8: " + quote(id))
	}
	return nil
}

func checkLease(l Lease) error {
	if err := checkID(l.ID); err != nil {
		return err
	}
	if len(l.Token) < 1 || len(l.Token) > MaxTokenBytes {
		return invalid(fmt.Sprintf("token must be 1..%d bytes", MaxTokenBytes))
	}
	return nil
}

func checkLeases(leases []Lease) error {
	for _, l := range leases {
		if err := checkLease(l); err != nil {
			return err
		}
	}
	return nil
}

func checkDuration(name string, ms, minimum int64) error {
	if ms < minimum || ms > MaxDurationMs {
		return invalid(fmt.Sprintf("%s must be in %d..%d ms, got %d", name, minimum, MaxDurationMs, ms))
	}
	return nil
}

func checkRange(name string, v, lo, hi int64) error {
	if v < lo || v > hi {
		return invalid(fmt.Sprintf("%s must be in %d..%d, got %d", name, lo, hi, v))
	}
	return nil
}

func checkBatch(name string, n int) error { return checkRange(name, int64(n), 1, MaxBatch) }

// hashTag returns the Redis Cluster hash tag of key (between the first '{' and the next '}').
func hashTag(key string) (string, bool) {
	start := strings.IndexByte(key, '{')
	if start < 0 {
		return "", false
	}
	end := strings.IndexByte(key[start+1:], '}')
	if end <= 0 {
		return "", false
	}
	return key[start+1 : start+1+end], true
}

// reservedSegments are the key families whose names continue with any text (ids, runs): a prefix
// with one of them as a segment after its first would nest a queue inside another queue's keys.
var reservedSegments = map[string]bool{"item": true, "lease": true, "leased_by_session": true, "deep_clean": true}

// shardForm is the form of shard i of a sharded queue P, {P#i} (SPEC §19).
var shardForm = regexp.MustCompile(`^\{[^{}]+#(0|[1-9][0-9]{0,3})\}$`)

// checkShardForm refuses a prefix that is shard i (0..1023) of a sharded queue: a queue opened on
// its own with it would be that shard (RWQ-KEYS-010).
func checkShardForm(prefix string) error {
	m := shardForm.FindStringSubmatch(prefix)
	if m == nil {
		return nil
	}
	if i, _ := strconv.Atoi(m[1]); i >= MaxShards {
		return nil
	}
	return invalid("prefix must not have the form {P#i} of a sharded queue's shard i (RWQ-KEYS-010): " +
		quote(prefix) + "; open the sharded queue instead")
}

func checkPrefix(prefix string, cluster bool) error {
	if len(prefix) < 1 || len(prefix) > MaxIDBytes {
		return invalid(fmt.Sprintf("prefix must be 1..%d bytes", MaxIDBytes))
	}
	if strings.ContainsAny(prefix, `*?[]\`) {
		return invalid(`prefix must not contain glob characters * ? [ ] \: ` + quote(prefix))
	}
	for _, segment := range strings.Split(prefix, ":")[1:] {
		if reservedSegments[segment] {
			return invalid(fmt.Sprintf("prefix must not have a segment %q after its first: its keys would be "+
				"another queue's item or lease keys (RWQ-KEYS-008): %s", segment, quote(prefix)))
		}
	}
	if _, ok := hashTag(prefix); cluster && !ok {
		return invalid("on Redis Cluster the prefix must contain a hash tag such as {jobs}: " + quote(prefix))
	}
	return nil
}
