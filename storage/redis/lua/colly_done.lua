-- Done (CollyStorage): a request fetched outside the queue is finished;
-- it is visited for good. ARGV[4] request id. Returns 1.
redis.call('ZADD', KEYS[7], 0, ARGV[4])
touch()
return 1
