module github.com/rwq-protocol/rwq/tools/gomutate

go 1.21
