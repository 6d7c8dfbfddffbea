import { isApiPath } from './api-path';

describe('isApiPath (authentication in front of the router)', () => {
  it.each([
    '/api/v1',
    '/api/v1/settings',
    '/API/V1/settings',
    '/Api/v1/settings',
    '/api/v1/settings/',
    '//api/v1/settings',
    '/api//v1/settings',
    '/api/v1/%73ettings',
    '/%61pi/v1/settings',
    '/api%2Fv1/settings',
    '/api/v1/%E0%A4%A',
  ])('treats %s as an API path', (path) => {
    expect(isApiPath(path)).toBe(true);
  });

  it.each(['/', '/openapi.json', '/elsewhere', '/api/v10/settings', '/api/v2/settings', '/apiv1'])(
    'treats %s as outside the API',
    (path) => {
      expect(isApiPath(path)).toBe(false);
    },
  );
});
