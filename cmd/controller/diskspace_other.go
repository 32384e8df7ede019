//go:build !unix

package main

import "errors"

// statfsUsage is not available here: the gauges report an error.
func statfsUsage(string) (free, size uint64, err error) {
	return 0, 0, errors.New("disk space is only measured on unix")
}
