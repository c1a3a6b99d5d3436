package main

import (
	"encoding/hex"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
)

type roleInfo struct {
	Version   int64    `json:"version"`
	Expires   string   `json:"expires"`
	KeyIDs    []string `json:"keyids"`
	Threshold int      `json:"threshold"`
	// False for a targets role with changes staged since its last publish.
	Published bool `json:"published"`
	// Only for delegated roles.
	Paths []string `json:"paths,omitempty"`
}

type targetInfo struct {
	Path   string           `json:"path"`
	Length int64            `json:"length"`
	SHA256 string           `json:"sha256"`
	Custom *json.RawMessage `json:"custom"`
	Role   string           `json:"role"`
	// Where the target is stored, relative to repository/targets.
	File string `json:"file"`
}

type repoInfo struct {
	Roles   map[string]roleInfo `json:"roles"`
	Targets []targetInfo        `json:"targets"`
}

// info describes the staged state: what the next publish would put out.
func (r *repo) info() ([]byte, error) {
	out := repoInfo{Roles: map[string]roleInfo{}, Targets: []targetInfo{}}
	add := func(role string, version int64, expires time.Time, published bool) error {
		keyids, threshold, err := r.roleKeys(role)
		if err != nil {
			return err
		}
		out.Roles[role] = roleInfo{
			Version: version, Expires: expires.UTC().Format(time.RFC3339),
			KeyIDs: keyids, Threshold: threshold, Published: published,
		}
		return nil
	}
	if err := add(metadata.ROOT, r.root.Signed.Version, r.root.Signed.Expires, true); err != nil {
		return nil, err
	}
	if err := add(metadata.SNAPSHOT, r.snapshot.Signed.Version, r.snapshot.Signed.Expires, true); err != nil {
		return nil, err
	}
	if err := add(metadata.TIMESTAMP, r.timestamp.Signed.Version, r.timestamp.Signed.Expires, true); err != nil {
		return nil, err
	}
	for _, role := range r.targetsRoles() {
		m := r.targets[role]
		if err := add(role, m.Signed.Version, m.Signed.Expires, r.published(role)); err != nil {
			return nil, err
		}
		out.Targets = append(out.Targets, r.listTargets(role, m)...)
	}
	for _, d := range r.delegations() {
		ri := out.Roles[d.Name]
		ri.Paths = d.Paths
		out.Roles[d.Name] = ri
	}
	return json.MarshalIndent(out, "", "  ")
}

func (r *repo) listTargets(role string, m *metadata.Metadata[metadata.TargetsType]) []targetInfo {
	var out []targetInfo
	for _, p := range slices.Sorted(maps.Keys(m.Signed.Targets)) {
		t := m.Signed.Targets[p]
		stored, _ := filepath.Rel(r.targetsDir(), r.storedTarget(p, t))
		out = append(out, targetInfo{
			Path: p, Length: t.Length, SHA256: hex.EncodeToString(t.Hashes["sha256"]),
			Custom: t.Custom, Role: role, File: filepath.ToSlash(stored),
		})
	}
	return out
}
