/** The package version; a test keeps it equal to package.json's (read at build time, not run time, so bundles work). */
export const VERSION = '0.2.0';
