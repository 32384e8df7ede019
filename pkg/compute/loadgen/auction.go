package loadgen

import (
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// auction produces five relations with join keys between them:
//
//	organizations(id, name)                     tick 1, Organizations rows
//	users(id, org_id, name)                     tick 1, Users rows; org_id -> organizations.id
//	accounts(id, org_id, balance)               tick 1, one per organization
//	auctions(id, seller, item, end_time)        AuctionsPerTick per tick; seller -> users.id
//	bids(id, buyer, auction_id, amount, bid_time) BidsPerTick per tick; buyer -> users.id,
//	                                            auction_id -> an auction open at bid_time
//
// Every id is unique per relation and every choice a pure function of (seed,
// relation, id), so each row is produced by the shard its id hashes to.
type auction struct {
	opts Options
}

// Output indices of the auction generator.
const (
	AuctionOrganizations = iota
	AuctionUsers
	AuctionAccounts
	AuctionAuctions
	AuctionBids
)

var (
	i64Col  = row.ColumnType{Type: row.TypeInt64}
	textCol = row.ColumnType{Type: row.TypeText}
	tsCol   = row.ColumnType{Type: row.TypeTimestamp}

	auctionOutputs = []Output{
		{Name: "organizations", Desc: row.NewRelationDesc([]string{"id", "name"}, []row.ColumnType{i64Col, textCol}), Key: []int{0}},
		{Name: "users", Desc: row.NewRelationDesc([]string{"id", "org_id", "name"}, []row.ColumnType{i64Col, i64Col, textCol}), Key: []int{0}},
		{Name: "accounts", Desc: row.NewRelationDesc([]string{"id", "org_id", "balance"}, []row.ColumnType{i64Col, i64Col, i64Col}), Key: []int{0}},
		{Name: "auctions", Desc: row.NewRelationDesc([]string{"id", "seller", "item", "end_time"}, []row.ColumnType{i64Col, i64Col, textCol, tsCol}), Key: []int{0}},
		{Name: "bids", Desc: row.NewRelationDesc([]string{"id", "buyer", "auction_id", "amount", "bid_time"}, []row.ColumnType{i64Col, i64Col, i64Col, i64Col, tsCol}), Key: []int{0}},
	}

	auctionItems = []string{"Signed Memorabilia", "City Bar Crawl", "Best Pizza in Town", "Gift Basket", "Custom Art", "Vintage Watch", "Concert Tickets", "Mountain Bike"}
	orgNames     = []string{"Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell", "Cyberdyne", "Soylent"}
	userNames    = []string{"ada", "bob", "cyd", "dee", "eve", "fay", "gus", "hal", "ivy", "jon", "kim", "lee"}
)

func (a *auction) Outputs() []Output { return auctionOutputs }

func (a *auction) Clock() Clock { return Clock{Start: a.opts.Start, TickMS: a.opts.TickMS} }

// Relation salts keep choices of different relations independent.
const (
	saltOrg = iota + 1
	saltUser
	saltAccount
	saltAuction
	saltBid
)

// micros converts a frontier time (ms) to a timestamp datum (µs).
func micros(t frontier.Time) row.Datum { return row.Timestamp(int64(t) * 1000) }

func (a *auction) Generate(from, to Tick, shard Shard, emit Emit) error {
	return generate(a, from, to, shard, emit)
}

func (a *auction) GenerateChunk(pos Position, to Tick, maxItems uint64, shard Shard, emit Emit) (Position, error) {
	return generateChunk(a, pos, to, maxItems, shard, emit)
}

// fixed is the number of tick 1's extra items: organizations, users and
// accounts, in that order, before the tick's auctions and bids.
func (a *auction) fixed() uint64 { return 2*a.opts.Organizations + a.opts.Users }

func (a *auction) items(i Tick) uint64 {
	n := a.opts.AuctionsPerTick + a.opts.BidsPerTick
	if i == 1 {
		n += a.fixed()
	}
	return n
}

func (a *auction) generateItems(i Tick, lo, hi uint64, shard Shard, emit Emit) {
	o := &a.opts
	clock := a.Clock()
	t := clock.TimeOf(i)
	var key, buf row.Row
	// owned encodes id as the key column and reports whether shard owns it;
	// on success buf holds the key column, ready for the other columns.
	owned := func(id uint64) bool {
		key = row.AppendDatum(key[:0], row.Int64(int64(id)))
		if !shard.Owns(key) {
			return false
		}
		buf = append(buf[:0], key...)
		return true
	}
	var base uint64 // item number of this tick's first auction
	if i == 1 {
		base = a.fixed()
	}
	for j := lo; j < hi; j++ {
		switch {
		case j < o.Organizations && i == 1:
			id := j
			if owned(id) {
				buf = row.AppendDatum(buf, row.Text(orgNames[id%uint64(len(orgNames))]))
				emit(AuctionOrganizations, buf, t, 1)
			}
		case j < o.Organizations+o.Users && i == 1:
			id := j - o.Organizations
			if owned(id) {
				buf = row.AppendDatums(buf,
					row.Int64(int64(pick(o.Organizations, o.Seed, saltUser, id))),
					row.Text(userNames[pick(uint64(len(userNames)), o.Seed, saltUser+100, id)]))
				emit(AuctionUsers, buf, t, 1)
			}
		case j < base:
			id := j - o.Organizations - o.Users
			if owned(id) {
				buf = row.AppendDatums(buf,
					row.Int64(int64(id)),
					row.Int64(int64(1000+pick(100_000, o.Seed, saltAccount, id))))
				emit(AuctionAccounts, buf, t, 1)
			}
		case j < base+o.AuctionsPerTick:
			id := uint64(i-1)*o.AuctionsPerTick + (j - base)
			if owned(id) {
				buf = row.AppendDatums(buf,
					row.Int64(int64(pick(o.Users, o.Seed, saltAuction, id))),
					row.Text(auctionItems[pick(uint64(len(auctionItems)), o.Seed, saltAuction+100, id)]),
					micros(clock.TimeOf(i+Tick(o.AuctionTicks))))
				emit(AuctionAuctions, buf, t, 1)
			}
		default:
			// Bids go to auctions opened in the last AuctionTicks ticks,
			// which are still open at t.
			id := uint64(i-1)*o.BidsPerTick + (j - base - o.AuctionsPerTick)
			if !owned(id) {
				continue
			}
			open := min(uint64(i), o.AuctionTicks)
			opened := uint64(i) - pick(open, o.Seed, saltBid, id) // in (i-open, i]
			auctionID := (opened-1)*o.AuctionsPerTick + pick(o.AuctionsPerTick, o.Seed, saltBid+100, id)
			buf = row.AppendDatums(buf,
				row.Int64(int64(pick(o.Users, o.Seed, saltBid+200, id))),
				row.Int64(int64(auctionID)),
				row.Int64(int64(1+pick(1000, o.Seed, saltBid+300, id))),
				micros(t))
			emit(AuctionBids, buf, t, 1)
		}
	}
}
