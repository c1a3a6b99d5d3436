module agent-upgrade/test/tuf-repo

go 1.26.0

require (
	github.com/secure-systems-lab/go-securesystemslib v0.11.0
	github.com/sigstore/sigstore v1.10.6
	github.com/theupdateframework/go-tuf/v2 v2.4.2
)

require (
	github.com/google/go-containerregistry v0.20.7 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/sigstore/protobuf-specs v0.5.0 // indirect
	golang.org/x/crypto v0.50.0 // indirect
	golang.org/x/sys v0.43.0 // indirect
	golang.org/x/term v0.42.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20250825161204-c5933d9347a5 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
)
