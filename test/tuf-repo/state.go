package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/theupdateframework/go-tuf/v2/metadata"
)

// repo is one test repository, all of it under dir:
//
//	keys/<role>-<n>.json     private keys, every one ever made (roles name theirs by keyid)
//	staged/<role>.json       the latest metadata of every role, published or not
//	repository/metadata/     what a client fetches: N.root.json, timestamp.json, N.snapshot.json,
//	                         N.targets.json, N.<delegated>.json (and N.timestamp.json, see writeTimestamp)
//	repository/targets/      target files, as <dir>/<sha256>.<base>
//
// The staged copies let add-target and remove-target change a targets role without a client
// seeing it until publish; repository/metadata only ever gains signed, versioned files.
type repo struct {
	dir       string
	root      *metadata.Metadata[metadata.RootType]
	snapshot  *metadata.Metadata[metadata.SnapshotType]
	timestamp *metadata.Metadata[metadata.TimestampType]
	// "targets" and each delegated role, by name.
	targets map[string]*metadata.Metadata[metadata.TargetsType]
}

func (r *repo) stagedPath(role string) string { return filepath.Join(r.dir, "staged", role+".json") }
func (r *repo) metadataDir() string           { return filepath.Join(r.dir, "repository", "metadata") }
func (r *repo) targetsDir() string            { return filepath.Join(r.dir, "repository", "targets") }
func (r *repo) keysDir() string               { return filepath.Join(r.dir, "keys") }

// versionedName is the consistent-snapshot file name a client asks for.
func versionedName(role string, version int64) string {
	return fmt.Sprintf("%d.%s.json", version, role)
}

func loadRole[T metadata.Roles](path string) (*metadata.Metadata[T], error) {
	m, err := (&metadata.Metadata[T]{}).FromFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is missing (is this a repository made by tuf-repo init?)", path)
	}
	return m, err
}

func openRepo(dir string) (*repo, error) {
	r := &repo{dir: dir, targets: map[string]*metadata.Metadata[metadata.TargetsType]{}}
	var err error
	if r.root, err = loadRole[metadata.RootType](r.stagedPath(metadata.ROOT)); err != nil {
		return nil, err
	}
	if r.snapshot, err = loadRole[metadata.SnapshotType](r.stagedPath(metadata.SNAPSHOT)); err != nil {
		return nil, err
	}
	if r.timestamp, err = loadRole[metadata.TimestampType](r.stagedPath(metadata.TIMESTAMP)); err != nil {
		return nil, err
	}
	top, err := loadRole[metadata.TargetsType](r.stagedPath(metadata.TARGETS))
	if err != nil {
		return nil, err
	}
	r.targets[metadata.TARGETS] = top
	for _, d := range r.delegations() {
		if r.targets[d.Name], err = loadRole[metadata.TargetsType](r.stagedPath(d.Name)); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *repo) delegations() []metadata.DelegatedRole {
	if d := r.targets[metadata.TARGETS].Signed.Delegations; d != nil {
		return d.Roles
	}
	return nil
}

// targetsRoles is "targets" then the delegated roles in delegation order: a fixed order so the
// output (and which keys sign) never depends on map iteration.
func (r *repo) targetsRoles() []string {
	names := []string{metadata.TARGETS}
	for _, d := range r.delegations() {
		names = append(names, d.Name)
	}
	return names
}

// roleKeys is who may sign a role and how many must: root says for the top-level roles,
// targets for the delegated ones.
func (r *repo) roleKeys(role string) ([]string, int, error) {
	if top, ok := r.root.Signed.Roles[role]; ok {
		return top.KeyIDs, top.Threshold, nil
	}
	for _, d := range r.delegations() {
		if d.Name == role {
			return d.KeyIDs, d.Threshold, nil
		}
	}
	return nil, 0, fmt.Errorf("no role %q (roles: root, timestamp, snapshot, %v)", role, r.targetsRoles())
}

func (r *repo) targetsRole(role string) (*metadata.Metadata[metadata.TargetsType], error) {
	if m, ok := r.targets[role]; ok {
		return m, nil
	}
	return nil, fmt.Errorf("no targets role %q (targets roles: %v)", role, r.targetsRoles())
}

// published says whether a targets role's staged version is already out; a change to a
// published version needs a new version number, more changes before publish do not.
func (r *repo) published(role string) bool {
	m := r.targets[role]
	_, err := os.Stat(filepath.Join(r.metadataDir(), versionedName(role, m.Signed.Version)))
	return err == nil
}

// touch readies a targets role for a change: a new version unless this one is still unpublished.
func (r *repo) touch(role string) {
	if r.published(role) {
		r.targets[role].Signed.Version++
	}
	r.targets[role].ClearSignatures()
}

func (r *repo) save() error {
	if err := saveRole(r.stagedPath(metadata.ROOT), r.root); err != nil {
		return err
	}
	if err := saveRole(r.stagedPath(metadata.SNAPSHOT), r.snapshot); err != nil {
		return err
	}
	if err := saveRole(r.stagedPath(metadata.TIMESTAMP), r.timestamp); err != nil {
		return err
	}
	for _, role := range r.targetsRoles() {
		if err := saveRole(r.stagedPath(role), r.targets[role]); err != nil {
			return err
		}
	}
	return nil
}

func saveRole[T metadata.Roles](path string, m *metadata.Metadata[T]) error {
	data, err := m.ToBytes(true)
	if err != nil {
		return err
	}
	return writeAtomic(path, data)
}

// writeAtomic replaces a file in one rename, so a test server reading timestamp.json while
// publish rewrites it sees the old file or the new one, never half of one.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func isTopLevel(role string) bool {
	return slices.Contains(metadata.TOP_LEVEL_ROLE_NAMES[:], role)
}
