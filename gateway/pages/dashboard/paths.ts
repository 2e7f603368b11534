/** Where the dashboard lives (under PUBLIC_BASE_URL) and its fixed paths. */
export const DASHBOARD = "/dashboard";
export const LOGIN_PATH = `${DASHBOARD}/login`;
export const INVITE_PATH = `${DASHBOARD}/invite`;
export const ENROL_PATH = `${DASHBOARD}/two-factor`;

export const inviteUrlOf = (publicBaseUrl: string, token: string) => `${publicBaseUrl.replace(/\/$/, "")}${INVITE_PATH}/${token}`;
