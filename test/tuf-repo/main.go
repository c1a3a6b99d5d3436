// Command tuf-repo makes and changes TUF repositories for agent-upgrade's tests, with go-tuf v2:
// an implementation independent of the client under test (tuf-js), so a bug shared by the
// repository side and the client side cannot hide itself. Test keys, no network, no upload.
//
// Usage: see usage below. Every command takes --dir D; all state lives there (see repo).
// Errors exit 1 with one line on stderr.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

const usage = `usage: tuf-repo COMMAND --dir D [flags]
  init           [--expires-days N] [--root-keys N --root-threshold T] [--targets-keys N --targets-threshold T]
                 [--delegate NAME --delegate-paths 'p,…' --delegate-keys N --delegate-threshold T]
  add-target     --path PATH --file FILE [--custom JSON] [--role ROLE]
  remove-target  --path PATH [--role ROLE]
  publish        [--sign-with ROLE=K,…]
  rotate-root    [--new-keys N] [--threshold T] [--sign-old K] [--sign-new K] [--rotate-role R,…]
  expire         --role ROLE --at RFC3339
  bump           --role timestamp|snapshot
  info`

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" {
		fmt.Println(usage)
		return
	}
	name, args := os.Args[1], os.Args[2:]
	commands := map[string]func([]string) error{
		"init": cmdInit, "add-target": cmdAddTarget, "remove-target": cmdRemoveTarget, "publish": cmdPublish,
		"rotate-root": cmdRotateRoot, "expire": cmdExpire, "bump": cmdBump, "info": cmdInfo,
	}
	run, ok := commands[name]
	var err error
	if !ok {
		err = fmt.Errorf("unknown command (want one of init, add-target, remove-target, publish, rotate-root, expire, bump, info)")
	} else {
		err = run(args)
	}
	if errors.Is(err, flag.ErrHelp) {
		fmt.Println(usage)
		return
	}
	if err != nil {
		// One line, so a test's failure message quotes it whole.
		fmt.Fprintf(os.Stderr, "tuf-repo %s: %s\n", name, strings.ReplaceAll(err.Error(), "\n", " "))
		os.Exit(1)
	}
}

// flags is a command's flag set plus --dir, which every command needs.
type flags struct {
	*flag.FlagSet
	dir *string
}

func newFlags(name string) flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// The flag package's own report is several lines; main prints the error as one.
	fs.SetOutput(io.Discard)
	return flags{fs, fs.String("dir", "", "repository directory")}
}

// parse parses args and checks that --dir and each named flag were given.
func (f flags) parse(args []string, required ...string) error {
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", f.Arg(0))
	}
	set := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for _, name := range append([]string{"dir"}, required...) {
		if !set[name] {
			return fmt.Errorf("--%s is required", name)
		}
	}
	return nil
}

func (f flags) open() (*repo, error) { return openRepo(*f.dir) }

func list(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func cmdInit(args []string) error {
	f := newFlags("init")
	o := initOptions{}
	f.IntVar(&o.expiresDays, "expires-days", 365, "days until every role expires")
	f.IntVar(&o.rootKeys, "root-keys", 1, "root keys")
	f.IntVar(&o.rootThreshold, "root-threshold", 1, "root threshold")
	f.IntVar(&o.targetsKeys, "targets-keys", 1, "targets keys")
	f.IntVar(&o.targetsThreshold, "targets-threshold", 1, "targets threshold")
	f.StringVar(&o.delegate, "delegate", "", "a delegated targets role")
	paths := f.String("delegate-paths", "", "its path patterns, comma separated")
	f.IntVar(&o.delegateKeys, "delegate-keys", 1, "its keys")
	f.IntVar(&o.delegateThresh, "delegate-threshold", 1, "its threshold")
	if err := f.parse(args); err != nil {
		return err
	}
	o.delegatePaths = list(*paths)
	return initRepo(*f.dir, o)
}

func cmdAddTarget(args []string) error {
	f := newFlags("add-target")
	path := f.String("path", "", "target path")
	file := f.String("file", "", "local file")
	custom := f.String("custom", "", "custom metadata, a JSON object")
	role := f.String("role", "targets", "targets role that lists it")
	outside := f.Bool("outside-delegation", false, "let a delegated role list a path outside its paths (an attack)")
	if err := f.parse(args, "path", "file"); err != nil {
		return err
	}
	r, err := f.open()
	if err != nil {
		return err
	}
	return r.addTarget(*role, *path, *file, *custom, *outside)
}

func cmdRemoveTarget(args []string) error {
	f := newFlags("remove-target")
	path := f.String("path", "", "target path")
	role := f.String("role", "", "targets role that lists it (default: whichever does)")
	if err := f.parse(args, "path"); err != nil {
		return err
	}
	r, err := f.open()
	if err != nil {
		return err
	}
	return r.removeTarget(*role, *path)
}

func cmdPublish(args []string) error {
	f := newFlags("publish")
	signWith := f.String("sign-with", "", "ROLE=K,…: only the first K keys of ROLE sign")
	if err := f.parse(args); err != nil {
		return err
	}
	counts, err := parseSignWith(*signWith)
	if err != nil {
		return err
	}
	r, err := f.open()
	if err != nil {
		return err
	}
	if err := r.publish(counts); err != nil {
		return err
	}
	return r.save()
}

func cmdRotateRoot(args []string) error {
	f := newFlags("rotate-root")
	rot := rotation{}
	f.IntVar(&rot.newKeys, "new-keys", 0, "root keys in the new root (default: as many as now)")
	f.IntVar(&rot.threshold, "threshold", 0, "root threshold in the new root (default: as now)")
	f.IntVar(&rot.signOld, "sign-old", allKeys, "old root keys that sign (default: all)")
	f.IntVar(&rot.signNew, "sign-new", allKeys, "new root keys that sign (default: all)")
	roles := f.String("rotate-role", "", "top-level roles that get new keys too")
	if err := f.parse(args); err != nil {
		return err
	}
	rot.roles = list(*roles)
	r, err := f.open()
	if err != nil {
		return err
	}
	if err := r.rotateRoot(rot); err != nil {
		return err
	}
	return r.save()
}

func cmdExpire(args []string) error {
	f := newFlags("expire")
	role := f.String("role", "", "role")
	at := f.String("at", "", "new expiry, RFC 3339")
	if err := f.parse(args, "role", "at"); err != nil {
		return err
	}
	t, err := parseTime(*at)
	if err != nil {
		return err
	}
	r, err := f.open()
	if err != nil {
		return err
	}
	if err := r.expire(*role, t); err != nil {
		return err
	}
	return r.save()
}

func cmdBump(args []string) error {
	f := newFlags("bump")
	role := f.String("role", "", "timestamp or snapshot")
	toVersion := f.Int64("to-version", 0, "the version it gets (default: the next one); lower or far higher for attacks")
	if err := f.parse(args, "role"); err != nil {
		return err
	}
	r, err := f.open()
	if err != nil {
		return err
	}
	if err := r.bump(*role, *toVersion); err != nil {
		return err
	}
	return r.save()
}

func cmdInfo(args []string) error {
	f := newFlags("info")
	if err := f.parse(args); err != nil {
		return err
	}
	r, err := f.open()
	if err != nil {
		return err
	}
	out, err := r.info()
	if err != nil {
		return err
	}
	_, err = fmt.Println(string(out))
	return err
}
