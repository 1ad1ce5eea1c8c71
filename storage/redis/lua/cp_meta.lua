-- SetMeta: store one metadata value. ARGV[2] key, ARGV[3] value.
redis.call('HSET', meta, ARGV[2], ARGV[3])
touch()
return 1
