// Package load drives requests against a system under test the way a
// skeptical benchmark must: open-loop arrivals on a fixed schedule,
// served by a fixed set of pre-opened workers (one connection each).
//
// A closed loop, where each client waits for its previous answer, slows
// its own offered load exactly when the server stalls and so hides the
// queueing a stall causes. Here the arrival times are fixed in advance;
// a request's latency is measured from its scheduled arrival, so time
// spent waiting for a free worker (the client-side queue delay, reported
// separately) is part of it.
//
// Invariants:
//   - Arrival i is scheduled at Start + i/Rate, independent of completions.
//   - A request not finished when the phase ends (arrival window plus
//     grace) is returned as Censored with Latency = phase end - scheduled,
//     a lower bound; it is never reported as a completed latency, and a
//     completion after the phase end is ignored.
//   - Run returns only after every worker has stopped.
package load
