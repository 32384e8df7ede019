package loadgen

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Kind names a generator.
type Kind string

// The generators.
const (
	KindCounter  Kind = "COUNTER"
	KindKeyValue Kind = "KEY VALUE"
	KindAuction  Kind = "AUCTION"
)

// Options configure a generator. Zero fields take the defaults in
// DefaultOptions; fields of other kinds are ignored.
type Options struct {
	Kind Kind
	// Start is the time of tick 0 and Tick the interval between ticks, in
	// milliseconds. Start must be chosen once (by the controller) and
	// reused, or replicas disagree.
	Start  frontier.Time
	TickMS uint64
	// Seed varies the generated data.
	Seed uint64

	// COUNTER: retract row i-MaxCardinality at tick i; 0 keeps every row.
	MaxCardinality uint64

	// KEY VALUE: Keys keys, key % Partitions in the partition column, values
	// of ValueSize bytes. The snapshot (tick 1) writes SnapshotRounds rounds
	// over the keyspace (only the last survives); from tick 2 on, each tick
	// rewrites UpdatesPerTick keys, round-robin over the keyspace.
	Keys           uint64
	Partitions     uint64
	ValueSize      uint64
	SnapshotRounds uint64
	UpdatesPerTick uint64

	// AUCTION: Organizations organizations (each with one account) and
	// Users users at tick 1; every tick opens AuctionsPerTick auctions that
	// run for AuctionTicks ticks and places BidsPerTick bids on open ones.
	Organizations   uint64
	Users           uint64
	AuctionsPerTick uint64
	BidsPerTick     uint64
	AuctionTicks    uint64
}

// DefaultOptions returns the defaults for kind.
func DefaultOptions(kind Kind) Options {
	return Options{
		Kind:            kind,
		TickMS:          1000,
		Keys:            1000,
		Partitions:      1,
		ValueSize:       16,
		SnapshotRounds:  1,
		UpdatesPerTick:  1,
		Organizations:   20,
		Users:           1000,
		AuctionsPerTick: 1,
		BidsPerTick:     10,
		AuctionTicks:    10,
	}
}

// ParseOptions builds Options from a generator name and its WITH options.
// Names are case-insensitive with spaces or underscores ("TICK INTERVAL",
// "tick_ms"); intervals accept Go durations ("100ms", "1s") or plain
// milliseconds. Unknown options are errors.
func ParseOptions(generator string, opts map[string]string) (Options, error) {
	kind := Kind(strings.ToUpper(strings.Join(strings.Fields(strings.ReplaceAll(generator, "_", " ")), " ")))
	switch kind {
	case KindCounter, KindKeyValue, KindAuction:
	default:
		return Options{}, fmt.Errorf("load generator %q: unknown generator (want COUNTER, KEY VALUE or AUCTION)", generator)
	}
	o := DefaultOptions(kind)
	for name, val := range opts {
		norm := strings.ToLower(strings.Join(strings.Fields(strings.ReplaceAll(name, "_", " ")), "_"))
		var err error
		switch norm {
		case "generator":
			continue
		case "tick_interval", "tick_ms":
			o.TickMS, err = parseMillis(val)
			if err == nil && o.TickMS == 0 {
				err = fmt.Errorf("must be positive")
			}
		case "start", "start_ms", "as_of":
			var t uint64
			t, err = strconv.ParseUint(val, 10, 64)
			o.Start = frontier.Time(t)
		case "seed":
			o.Seed, err = strconv.ParseUint(val, 10, 64)
		case "max_cardinality":
			o.MaxCardinality, err = strconv.ParseUint(val, 10, 64)
		case "keys":
			o.Keys, err = parsePositive(val)
		case "partitions":
			o.Partitions, err = parsePositive(val)
		case "value_size":
			o.ValueSize, err = strconv.ParseUint(val, 10, 64)
		case "snapshot_rounds":
			o.SnapshotRounds, err = parsePositive(val)
		case "updates_per_tick", "batch_size":
			o.UpdatesPerTick, err = strconv.ParseUint(val, 10, 64)
		case "organizations":
			o.Organizations, err = parsePositive(val)
		case "users":
			o.Users, err = parsePositive(val)
		case "auctions_per_tick":
			o.AuctionsPerTick, err = parsePositive(val)
		case "bids_per_tick":
			o.BidsPerTick, err = strconv.ParseUint(val, 10, 64)
		case "auction_ticks":
			o.AuctionTicks, err = parsePositive(val)
		default:
			return Options{}, fmt.Errorf("load generator %s: unknown option %q", kind, name)
		}
		if err != nil {
			return Options{}, fmt.Errorf("load generator %s: option %s = %q: %w", kind, name, val, err)
		}
	}
	return o, o.Validate()
}

func parsePositive(s string) (uint64, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err == nil && v == 0 {
		err = fmt.Errorf("must be positive")
	}
	return v, err
}

func parseMillis(s string) (uint64, error) {
	s = strings.Trim(strings.TrimSpace(s), "'")
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		return v, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < time.Millisecond {
		return 0, fmt.Errorf("interval %v below 1ms", d)
	}
	return uint64(d / time.Millisecond), nil
}

// maxValueSize bounds KEY VALUE values so one row stays small.
const maxValueSize = 1 << 20

// Validate reports options no generator can run with.
func (o Options) Validate() error {
	if o.TickMS == 0 {
		return fmt.Errorf("load generator %s: tick interval must be positive", o.Kind)
	}
	switch o.Kind {
	case KindCounter:
	case KindKeyValue:
		if o.Keys == 0 || o.Partitions == 0 || o.SnapshotRounds == 0 {
			return fmt.Errorf("load generator %s: keys, partitions and snapshot rounds must be positive", o.Kind)
		}
		if o.Keys > 1<<62 {
			return fmt.Errorf("load generator %s: %d keys is too many", o.Kind, o.Keys)
		}
		if o.ValueSize > maxValueSize {
			return fmt.Errorf("load generator %s: value size %d above %d", o.Kind, o.ValueSize, maxValueSize)
		}
	case KindAuction:
		if o.Organizations == 0 || o.Users == 0 || o.AuctionsPerTick == 0 || o.AuctionTicks == 0 {
			return fmt.Errorf("load generator %s: organizations, users, auctions per tick and auction ticks must be positive", o.Kind)
		}
	default:
		return fmt.Errorf("load generator %q: unknown generator", o.Kind)
	}
	return nil
}
