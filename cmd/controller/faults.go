package main

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/storage"
)

// withStorageFaults adds POST /debug/storage/space?bytes=N to h: the
// storage directory then takes N more bytes and fails further writes with
// ENOSPC, as a full disk would (N < 0 lifts the limit). The chaos suite
// uses it to fill the disk without privileges; --storage-fault-injection
// turns it on.
func withStorageFaults(h http.Handler, faults *storage.FaultFS, log logr.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("POST /debug/storage/space", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseInt(r.URL.Query().Get("bytes"), 10, 64)
		if err != nil {
			http.Error(w, fmt.Sprintf("bytes: %v", err), http.StatusBadRequest)
			return
		}
		faults.LimitSpace(n, false)
		log.Info("Storage space limited for fault injection", "bytes", n)
		fmt.Fprintln(w, "ok")
	})
	return mux
}
