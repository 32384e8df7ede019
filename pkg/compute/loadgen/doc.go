// Package loadgen holds Tandem's built-in load generators: COUNTER,
// KEY VALUE and AUCTION. Each is a pure function of its Options, a tick
// range and a worker shard, so every replica, every restart and every worker
// count produces the same collection.
//
// Time. Tick i happens at Clock.TimeOf(i) = Start + i*Tick. Generate covers
// the ticks in (from, to]; tick 0 produces nothing, so the first call is
// Generate(0, n, ...). Tick 1 carries the initial snapshot (AUCTION's fixed
// relations, KEY VALUE's keyspace) and later ticks the changes.
//
// Sharding. A worker w out of W*P (Shard{Index: w, Count: W*P}) produces
// exactly the rows whose key (the encoded key columns, Output.Key) hashes to
// it: row.Hash(key) % Count == Index. The union over the shards of any count
// is the same collection, which the tests check for 1, 2 and 4 shards.
//
// Cost. Generators emit straight into a callback with a reused row buffer
// (no allocation per row): a KEY VALUE snapshot of tens of millions of keys
// costs one hash and one row encoding per key and shard. The row handed to
// Emit is only valid during the call; copy it to keep it. GenerateChunk
// bounds the work of one call (items: one key, one auction, one bid ...), so
// a source can spread a huge snapshot over several steps.
//
// Start must be fixed once per source (the controller passes "start", in ms)
// and persisted: with the default 0 the first tick range reaches back to the
// Unix epoch.
//
// API summary:
//
//	opts, err := loadgen.ParseOptions("KEY VALUE", map[string]string{"KEYS": "1000", "TICK INTERVAL": "1s"})
//	g, err := loadgen.New(opts)
//	g.Outputs()                      // []Output{Name, Desc, Key}
//	g.Clock().TimeOf(tick)
//	err = g.Generate(from, to, loadgen.Shard{Index: w, Count: n}, func(out int, r row.Row, t frontier.Time, diff int64) {...})
//	pos, err := g.GenerateChunk(loadgen.Start(from), to, maxItems, shard, emit) // bounded steps; resume from pos
//	ups, err := loadgen.Collect(g, from, to, shard) // copies, for tests and small sources
package loadgen
