"""What a redis-py error means for a lock operation, shared by the drivers of this folder.

A refused connection is a certain failure (nothing was sent); any other RedisError (a
timeout, a connection lost after sending, an error reply) leaves the outcome unknown: the
command may have run. `errors` is the `errors=` hook of locklab_driver.run.
"""
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, TimeoutError as RedisTimeoutError


def refused(e):
    return isinstance(e, RedisConnectionError) and not isinstance(e, RedisTimeoutError) \
        and "connecting to" in str(e)


def errors(e):
    if not isinstance(e, RedisError):
        return None
    if refused(e):
        return {"outcome": "fail", "detail": "connection refused: %s" % e}
    return {"outcome": "unknown", "detail": "%s: %s" % (type(e).__name__, e)}
