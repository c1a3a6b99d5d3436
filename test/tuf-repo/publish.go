package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
)

// allKeys, as the k of a signing step, means every key of the role.
const allKeys = -1

// writeRoot signs root with the first k of each given key list and writes N.root.json. A new
// root is signed by the old root's keys and its own (spec 5.3.4), so the caller passes both.
func (r *repo) writeRoot(keyLists [][]string, ks []int) error {
	r.root.ClearSignatures()
	for i, ids := range keyLists {
		signers, err := r.signers(ids, ks[i])
		if err != nil {
			return err
		}
		for _, s := range signers {
			if _, err := r.root.Sign(s); err != nil {
				return err
			}
		}
	}
	return r.writePublished(metadata.ROOT, r.root.Signed.Version, r.root.ToBytes)
}

// writeTargets signs a targets role's staged version and writes N.<role>.json.
func (r *repo) writeTargets(role string, k int) error {
	m := r.targets[role]
	if err := signRole(r, m, role, k); err != nil {
		return err
	}
	return r.writePublished(role, m.Signed.Version, m.ToBytes)
}

// writeSnapshot makes the next snapshot: the current one with the given targets roles at their
// new versions. Roles not given keep the version the last snapshot listed, so a bump or an
// expiry never leaks a targets change that has not been published.
func (r *repo) writeSnapshot(roles []string, k int) error {
	s := r.snapshot
	s.Signed.Version++
	for _, role := range roles {
		s.Signed.Meta[role+".json"] = metadata.MetaFile(r.targets[role].Signed.Version)
	}
	if err := signRole(r, s, metadata.SNAPSHOT, k); err != nil {
		return err
	}
	return r.writePublished(metadata.SNAPSHOT, s.Signed.Version, s.ToBytes)
}

// writeTimestamp makes the next timestamp for the current snapshot, with the snapshot file's
// length and sha256 so a client rejects a swapped snapshot before parsing it.
func (r *repo) writeTimestamp(k int) error {
	t := r.timestamp
	t.Signed.Version++
	snap, err := os.ReadFile(filepath.Join(r.metadataDir(), versionedName(metadata.SNAPSHOT, r.snapshot.Signed.Version)))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(snap)
	meta := metadata.MetaFile(r.snapshot.Signed.Version)
	meta.Length = int64(len(snap))
	meta.Hashes = metadata.Hashes{"sha256": sum[:]}
	t.Signed.Meta["snapshot.json"] = meta
	if err := signRole(r, t, metadata.TIMESTAMP, k); err != nil {
		return err
	}
	data, err := t.ToBytes(true)
	if err != nil {
		return err
	}
	// A client only ever asks for timestamp.json; N.timestamp.json keeps each old one for a
	// test to serve in its place (a freeze or rollback attack).
	if err := writeAtomic(filepath.Join(r.metadataDir(), "timestamp.json"), data); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(r.metadataDir(), versionedName(metadata.TIMESTAMP, t.Signed.Version)), data)
}

// writePublished writes a versioned file once: an existing one is a bug here, since clients
// and tests rely on a published version never changing.
func (r *repo) writePublished(role string, version int64, bytes func(bool) ([]byte, error)) error {
	path := filepath.Join(r.metadataDir(), versionedName(role, version))
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s is already published", path)
	}
	data, err := bytes(true)
	if err != nil {
		return err
	}
	return writeAtomic(path, data)
}

// publish writes every targets role changed since the last publish, or last published with fewer
// than all its keys, or named in signWith (each as a new version), then the next snapshot listing
// every targets role, then the next timestamp. So a plain publish after `--sign-with targets=1`
// repairs targets instead of leaving the under-signed version in place.
func (r *repo) publish(signWith map[string]int) error {
	for role := range signWith {
		if _, _, err := r.roleKeys(role); err != nil || role == metadata.ROOT {
			return fmt.Errorf("--sign-with: %q is not a targets role, snapshot or timestamp", role)
		}
	}
	roles := r.targetsRoles()
	for _, role := range roles {
		k, named := signWith[role]
		keyids, _, _ := r.roleKeys(role)
		fullySigned := len(r.targets[role].Signatures) >= len(keyids)
		if r.published(role) && fullySigned && !named {
			continue
		}
		if !named {
			k = allKeys
		}
		r.touch(role)
		if err := r.writeTargets(role, k); err != nil {
			return err
		}
	}
	if err := r.writeSnapshot(roles, keysFor(signWith, metadata.SNAPSHOT)); err != nil {
		return err
	}
	return r.writeTimestamp(keysFor(signWith, metadata.TIMESTAMP))
}

func keysFor(signWith map[string]int, role string) int {
	if k, ok := signWith[role]; ok {
		return k
	}
	return allKeys
}

// parseSignWith reads "targets=1,snapshot=0": how many of a role's keys sign this time.
func parseSignWith(s string) (map[string]int, error) {
	out := map[string]int{}
	if s == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		role, count, ok := strings.Cut(part, "=")
		k, err := strconv.Atoi(count)
		if !ok || err != nil || k < 0 {
			return nil, fmt.Errorf("--sign-with wants ROLE=K,… with K ≥ 0, got %q", part)
		}
		out[role] = k
	}
	return out, nil
}

// expire sets a role's expiry and publishes what a client then needs to see it: the role itself
// at a new version, plus a new snapshot and timestamp for a snapshot or targets role.
func (r *repo) expire(role string, at time.Time) error {
	switch role {
	case metadata.ROOT:
		r.root.Signed.Expires = at
		r.root.Signed.Version++
		ids := r.root.Signed.Roles[metadata.ROOT].KeyIDs
		return r.writeRoot([][]string{ids}, []int{allKeys})
	case metadata.TIMESTAMP:
		r.timestamp.Signed.Expires = at
		return r.writeTimestamp(allKeys)
	case metadata.SNAPSHOT:
		r.snapshot.Signed.Expires = at
		return r.bump(metadata.SNAPSHOT, 0)
	}
	m, err := r.targetsRole(role)
	if err != nil {
		return err
	}
	// Staged changes to this role go out with it; other roles' staged changes wait for publish.
	r.touch(role)
	m.Signed.Expires = at
	if err := r.writeTargets(role, allKeys); err != nil {
		return err
	}
	if err := r.writeSnapshot([]string{role}, allKeys); err != nil {
		return err
	}
	return r.writeTimestamp(allKeys)
}

// bump publishes a new version of timestamp or snapshot with nothing else changed; toVersion,
// when not 0, is the version it gets (a fast-forward attack signs a far higher one, and the
// publisher's recovery goes back to a low one after rotating the key).
func (r *repo) bump(role string, toVersion int64) error {
	switch role {
	case metadata.TIMESTAMP:
		if toVersion > 0 {
			r.timestamp.Signed.Version = toVersion - 1
		}
		return r.writeTimestamp(allKeys)
	case metadata.SNAPSHOT:
		if toVersion > 0 {
			r.snapshot.Signed.Version = toVersion - 1
		}
		if err := r.writeSnapshot(nil, allKeys); err != nil {
			return err
		}
		return r.writeTimestamp(allKeys)
	}
	return fmt.Errorf("--role must be timestamp or snapshot, got %q", role)
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--at wants an RFC 3339 time such as 2030-01-02T03:04:05Z: %w", err)
	}
	// The spec's form is whole seconds in UTC ("2030-01-02T03:04:05Z"); Go writes what it holds.
	return t.UTC().Truncate(time.Second), nil
}

func expiresIn(days int) time.Time {
	return time.Now().UTC().Truncate(time.Second).AddDate(0, 0, days)
}
