const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are uuids; anything else can name no record (and must not reach a uuid column). */
export const isUuid = (value: string): boolean => UUID.test(value);
