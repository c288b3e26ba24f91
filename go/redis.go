package rwq

import (
	"errors"
	"net/url"

	"github.com/redis/go-redis/v9"
)

// ParseRedisURL turns a redis:// or rediss:// URL (as redis.ParseURL reads it: user, password,
// database, TLS, and go-redis's query options such as dial_timeout or pool_size) into options
// for redis.NewUniversalClient, with the setting rwq needs: MaxRetries -1, so that a script call
// whose reply was lost is reported as REDIS_ERROR rather than sent again and run twice
// (RWQ-FAIL-004). Set IsClusterMode for a Redis Cluster reached through this one node, or
// MasterName (and Addrs: the sentinels) for Sentinel.
//
// The error names neither the URL nor its password.
func ParseRedisURL(raw string) (*redis.UniversalOptions, error) {
	o, err := redis.ParseURL(raw)
	if err != nil {
		var uerr *url.Error // its text holds the whole URL, password included
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, invalid("cannot read the Redis URL: " + err.Error())
	}
	return &redis.UniversalOptions{
		Addrs: []string{o.Addr}, ClientName: o.ClientName, DB: o.DB, Protocol: o.Protocol,
		Username: o.Username, Password: o.Password, TLSConfig: o.TLSConfig,
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		PoolSize: o.PoolSize, MinIdleConns: o.MinIdleConns, MaxIdleConns: o.MaxIdleConns,
		PoolTimeout: o.PoolTimeout, ConnMaxIdleTime: o.ConnMaxIdleTime, ConnMaxLifetime: o.ConnMaxLifetime,
		MaxRetries: -1,
	}, nil
}
