export const CLIENT_PLACEHOLDER = true;
