/** This package's version (its package.json's). */
export const VERSION = "0.1.0";
