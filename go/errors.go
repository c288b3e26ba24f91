package rwq

import (
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Code is an RWQ/1 error code (SPEC §6.1): a closed set.
type Code string

// The error codes of SPEC §6.1.
const (
	CodeInvalidArgument   Code = "INVALID_ARGUMENT"   // bad input; nothing was written
	CodeLeaseLost         Code = "LEASE_LOST"         // the caller does not hold the lease; nothing changed
	CodeUnsupportedServer Code = "UNSUPPORTED_SERVER" // the server cannot run RWQ/1 (older than 6.2)
	CodeRedisError        Code = "REDIS_ERROR"        // Redis failed or was unreachable; outcome may be unknown
	CodeWrongType         Code = "WRONG_TYPE"         // a key of the layout has another Redis type; nothing was written
	CodeNotReplicated     Code = "NOT_REPLICATED"     // profile ack: done on the primary, too few replicas acknowledged in time
	CodeShardMismatch     Code = "SHARD_MISMATCH"     // profile sharded: the queue records another shard count (RWQ-SHARD-003)
)

// Sentinels to test an error's code with errors.Is; errors.As with *Error gives the details.
var (
	ErrInvalidArgument   = errors.New("rwq: " + string(CodeInvalidArgument))
	ErrLeaseLost         = errors.New("rwq: " + string(CodeLeaseLost))
	ErrUnsupportedServer = errors.New("rwq: " + string(CodeUnsupportedServer))
	ErrRedis             = errors.New("rwq: " + string(CodeRedisError))
	ErrWrongType         = errors.New("rwq: " + string(CodeWrongType))
	ErrNotReplicated     = errors.New("rwq: " + string(CodeNotReplicated))
	ErrShardMismatch     = errors.New("rwq: " + string(CodeShardMismatch))

	// ErrNoPermission matches a REDIS_ERROR that is the server's ACL refusing a command of the
	// call (NOPERM): errors.Is(err, ErrNoPermission) and errors.Is(err, ErrRedis) both hold. A
	// canonical script refused by the ACL wrote nothing (RWQ-SEC-006).
	ErrNoPermission = errors.New("rwq: no permission (ACL)")
)

var sentinels = map[Code]error{
	CodeInvalidArgument:   ErrInvalidArgument,
	CodeLeaseLost:         ErrLeaseLost,
	CodeUnsupportedServer: ErrUnsupportedServer,
	CodeRedisError:        ErrRedis,
	CodeWrongType:         ErrWrongType,
	CodeNotReplicated:     ErrNotReplicated,
	CodeShardMismatch:     ErrShardMismatch,
}

// Error is every error this package returns: an RWQ/1 code, a message and, for REDIS_ERROR,
// the underlying go-redis or context error (reachable with errors.Is/As through Unwrap).
type Error struct {
	Code    Code
	Message string
	Err     error
}

func (e *Error) Error() string { return "rwq: " + string(e.Code) + ": " + e.Message }

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's code, or ErrNoPermission for an ACL refusal.
func (e *Error) Is(target error) bool {
	if target == ErrNoPermission {
		return e.Code == CodeRedisError && ACLRefused(e)
	}
	return target != nil && target == sentinels[e.Code]
}

func invalid(msg string) error { return &Error{Code: CodeInvalidArgument, Message: msg} }

func leaseLost(id string) error {
	return &Error{Code: CodeLeaseLost, Message: "the lease on " + quote(id) + " is no longer held by this caller"}
}

func redisFailure(msg string, err error) error {
	return &Error{Code: CodeRedisError, Message: msg, Err: err}
}

// translate maps a go-redis error: a script's "RWQ_<CODE> text" reply to that code (SPEC
// RWQ-SCRIPT-004), anything else to REDIS_ERROR.
func translate(err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) && !errors.Is(err, redis.Nil) {
		if rest, ok := strings.CutPrefix(rerr.Error(), "RWQ_"); ok {
			code, text, _ := strings.Cut(rest, " ")
			if _, known := sentinels[Code(code)]; known {
				return &Error{Code: Code(code), Message: text}
			}
		}
	}
	return redisFailure(err.Error(), err)
}

// ACLRefused reports whether err is the server's ACL refusing a command of the call (NOPERM, or
// Redis 7.0's text for a refusal inside a script). Its code is REDIS_ERROR; a canonical script
// refused by the ACL wrote nothing (RWQ-SEC-006).
func ACLRefused(err error) bool {
	if err == nil {
		return false
	}
	text := err.Error()
	for _, sign := range []string{"NOPERM", "no permissions", "can't run this command", "can't access at least one of the keys"} {
		if strings.Contains(text, sign) {
			return true
		}
	}
	return false
}
