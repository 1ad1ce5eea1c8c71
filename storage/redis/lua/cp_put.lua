-- Put: insert or replace records, in order (a later duplicate wins).
-- ARGV[2..] triplets: id, state (1..6), record JSON.
for i = 2, #ARGV, 3 do
  putRecord(ARGV[i], ARGV[i + 1], ARGV[i + 2])
end
touch()
return #ARGV
