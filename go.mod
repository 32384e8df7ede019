module github.com/tandemdb/tandem

go 1.26
