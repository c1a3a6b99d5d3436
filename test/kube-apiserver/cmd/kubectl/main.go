// Command kubectl is the upstream kubectl at the same version as the test kube-apiserver, so the
// tests do not depend on whichever kubectl (if any) the machine has.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"

	_ "k8s.io/client-go/plugin/pkg/client/auth" // exec and OIDC credential plugins, as upstream
)

func main() {
	// Verbosity is set before the command is built because building it already logs.
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) //nolint:errcheck
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
