/** Help text shared by the fleet's operator commands. */

export const CLUSTER_HELP = `
      The cluster is chosen as kubectl chooses it: \`--kubeconfig\`, else KUBECONFIG, the
      in-cluster service account or ~/.kube/config, and \`--context\` or the current context.
      AgentRollouts and AgentReleases are cluster-scoped, so there is no namespace to give. The
      identity needs get and list (status, list) and patch (the others) on
      \`agentrollouts.agent-upgrade.dev\`, and get and patch on \`agentreleases.agent-upgrade.dev\`
      for \`release\`.`;

export const EXITS_HELP = `
      Exit codes: 0 done, or already so ("unchanged"); 1 failed and nothing changed
      (\`E_NOT_FOUND\`: no such object; \`E_CLUSTER\`, \`E_CLUSTER_AUTH\`); 2 usage or a change the API
      server would refuse (\`E_USAGE\`, \`E_TRANSITION_REFUSED\`, \`E_NO_ROLLBACK_RELEASE\`), refused
      before anything is sent.`;

export const WRITES_HELP = `
      The change is a merge-patch guarded by the resourceVersion the object was read at: when it
      changed in between (409 Conflict), it is read again and decided again, up to 5 times.`;
