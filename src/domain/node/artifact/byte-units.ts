/** One mebibyte: size limits are configured in whole MiB and shown in MiB. */
export const MIB = 1024 * 1024;
