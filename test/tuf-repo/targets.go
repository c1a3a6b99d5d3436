package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/cjson"
	"github.com/theupdateframework/go-tuf/v2/metadata"
)

type initOptions struct {
	expiresDays      int
	rootKeys         int
	rootThreshold    int
	targetsKeys      int
	targetsThreshold int
	delegate         string
	delegatePaths    []string
	delegateKeys     int
	delegateThresh   int
}

var roleName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// initRepo makes and publishes version 1 of every role.
func initRepo(dir string, o initOptions) error {
	if _, err := os.Stat(filepath.Join(dir, "staged", "root.json")); err == nil {
		return fmt.Errorf("%s is already a repository", dir)
	}
	counts := map[string][2]int{
		metadata.ROOT: {o.rootKeys, o.rootThreshold}, metadata.TARGETS: {o.targetsKeys, o.targetsThreshold},
		metadata.SNAPSHOT: {1, 1}, metadata.TIMESTAMP: {1, 1},
	}
	// Every option is checked before the first key is written, so a refused init leaves no keys.
	if err := o.validate(counts); err != nil {
		return err
	}
	expires := expiresIn(o.expiresDays)
	r := &repo{dir: dir, targets: map[string]*metadata.Metadata[metadata.TargetsType]{}}
	r.root = metadata.Root(expires)
	for _, role := range metadata.TOP_LEVEL_ROLE_NAMES {
		if _, err := r.replaceKeys(role, counts[role][0]); err != nil {
			return err
		}
		r.root.Signed.Roles[role].Threshold = counts[role][1]
	}
	r.targets[metadata.TARGETS] = metadata.Targets(expires)
	if o.delegate != "" {
		if err := r.addDelegate(o, expires); err != nil {
			return err
		}
	}
	// Version 0 here so that publish, which makes the next version, makes version 1.
	r.snapshot = metadata.Snapshot(expires)
	r.snapshot.Signed.Version = 0
	r.timestamp = metadata.Timestamp(expires)
	r.timestamp.Signed.Version = 0
	if err := r.writeRoot([][]string{r.root.Signed.Roles[metadata.ROOT].KeyIDs}, []int{allKeys}); err != nil {
		return err
	}
	if err := r.publish(nil); err != nil {
		return err
	}
	return r.save()
}

func (o initOptions) validate(counts map[string][2]int) error {
	if o.delegate != "" {
		if !roleName.MatchString(o.delegate) || isTopLevel(o.delegate) {
			return fmt.Errorf("--delegate %q: want [a-z0-9_-]+ and not a top-level role", o.delegate)
		}
		if len(o.delegatePaths) == 0 {
			return fmt.Errorf("--delegate needs --delegate-paths")
		}
		counts = maps.Clone(counts)
		counts[o.delegate] = [2]int{o.delegateKeys, o.delegateThresh}
	}
	for _, role := range slices.Sorted(maps.Keys(counts)) {
		if keys, threshold := counts[role][0], counts[role][1]; threshold < 1 || threshold > keys {
			return fmt.Errorf("%s threshold %d is not between 1 and its %d keys", role, threshold, keys)
		}
	}
	return nil
}

// addDelegate delegates the paths to a new targets role, terminating so a client looks no further.
func (r *repo) addDelegate(o initOptions, expires time.Time) error {
	role := metadata.DelegatedRole{
		Name: o.delegate, KeyIDs: []string{}, Threshold: o.delegateThresh, Terminating: true, Paths: o.delegatePaths,
	}
	top := r.targets[metadata.TARGETS]
	top.Signed.Delegations = &metadata.Delegations{Keys: map[string]*metadata.Key{}, Roles: []metadata.DelegatedRole{role}}
	for range o.delegateKeys {
		key, err := r.newKey(o.delegate)
		if err != nil {
			return err
		}
		if err := top.Signed.AddKey(key, o.delegate); err != nil {
			return err
		}
	}
	r.targets[o.delegate] = metadata.Targets(expires)
	return nil
}

// addTarget stores file under its consistent-snapshot name and lists it in role (staged only).
func (r *repo) addTarget(role, targetPath, file, custom string, outsideDelegation bool) error {
	m, err := r.targetsRole(role)
	if err != nil {
		return err
	}
	if err := r.checkTargetPath(role, targetPath, outsideDelegation); err != nil {
		return err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	// sha256 only: with one hash there is one stored name, whichever hash a client picks.
	info, err := metadata.TargetFile().FromBytes(targetPath, data, "sha256")
	if err != nil {
		return err
	}
	if custom != "" {
		var obj map[string]any
		if err := json.Unmarshal([]byte(custom), &obj); err != nil {
			return fmt.Errorf("--custom is not a JSON object: %w", err)
		}
		raw := json.RawMessage(custom)
		info.Custom = &raw
		// Checked now, not at publish: a float would stay staged and fail every publish after.
		if _, err := cjson.EncodeCanonical(info); err != nil {
			return fmt.Errorf("--custom cannot be signed (canonical JSON has no floats): %w", err)
		}
	}
	if err := writeAtomic(r.storedTarget(targetPath, info), data); err != nil {
		return err
	}
	r.touch(role)
	m.Signed.Targets[targetPath] = info
	return r.save()
}

// storedTarget is where a client fetches a target with consistent snapshots: the directory of
// its path, then <sha256 hex>.<base name>.
func (r *repo) storedTarget(targetPath string, info *metadata.TargetFiles) string {
	dir, base := path.Split(targetPath)
	return filepath.Join(r.targetsDir(), filepath.FromSlash(dir), hex.EncodeToString(info.Hashes["sha256"])+"."+base)
}

// checkTargetPath refuses a path that is not clean and relative, and one outside the role's
// delegated paths unless outsideDelegation asks for that on purpose (an extraneous-target attack).
func (r *repo) checkTargetPath(role, targetPath string, outsideDelegation bool) error {
	clean := path.Clean(targetPath)
	if targetPath == "" || clean != targetPath || strings.HasPrefix(clean, "/") || strings.HasPrefix(clean, "../") {
		return fmt.Errorf("--path %q: want a clean relative path such as agent/1.2.3/agent.tar.gz", targetPath)
	}
	for _, d := range r.delegations() {
		if d.Name == role && !outsideDelegation {
			if ok, err := d.IsDelegatedPath(targetPath); err != nil || !ok {
				return fmt.Errorf("--path %q is outside %s's paths %v", targetPath, role, d.Paths)
			}
		}
	}
	return nil
}

// removeTarget drops a target from its role (staged only). The stored file stays: older
// targets versions still list it.
func (r *repo) removeTarget(role, targetPath string) error {
	if role == "" {
		for _, name := range r.targetsRoles() {
			if _, ok := r.targets[name].Signed.Targets[targetPath]; ok {
				role = name
				break
			}
		}
		if role == "" {
			return fmt.Errorf("no role lists %q", targetPath)
		}
	}
	m, err := r.targetsRole(role)
	if err != nil {
		return err
	}
	if _, ok := m.Signed.Targets[targetPath]; !ok {
		return fmt.Errorf("%s does not list %q", role, targetPath)
	}
	r.touch(role)
	delete(m.Signed.Targets, targetPath)
	return r.save()
}
