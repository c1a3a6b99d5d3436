/** The package version; a test keeps it equal to package.json's. */
export const AGENT_UPGRADE_VERSION = '0.1.0';
