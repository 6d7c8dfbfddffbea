import { ValidationError } from '../errors';
import { refuseUndecodableUrl } from './url-text';

const pathsOf = (querystring: string, captures: string[] = [], names: string[] = []): unknown => {
  try {
    refuseUndecodableUrl(querystring, captures, names);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return (err as ValidationError).issues.map((issue) => issue.path);
  }
  return [];
};

describe('refuseUndecodableUrl', () => {
  it.each([
    [''],
    ['clientId=abc&limit=10'],
    ['clientId=%C3%A9t%C3%A9&user=%F0%9F%98%80'],
    ['clientId=%e2%82%ac'],
    ['q=a+b&flag&=x'],
    // A malformed escape is left as text by the query parser, which is UTF-8: only bytes that decode badly count.
    ['clientId=%zz%2'],
    ['clientId=%25ED%25A0%2580'],
  ])('accepts %s', (querystring) => {
    expect(pathsOf(querystring)).toEqual([]);
  });

  it.each<[string, unknown]>([
    ['clientId=%ED%A0%80', [['query', 'clientId']]],
    ['clientId=%ED%B0%80', [['query', 'clientId']]],
    ['limit=1&clientId=a%FFb', [['query', 'clientId']]],
    ['clientId=%C3', [['query', 'clientId']]],
    ['clientId=%C0%AF', [['query', 'clientId']]],
    ['user+id=%80', [['query', 'user id']]],
    ['%FF=1', [['query']]],
  ])('refuses %s naming the parameter', (querystring, paths) => {
    expect(pathsOf(querystring)).toEqual(paths);
  });

  it('refuses a path parameter that is not UTF-8, naming it', () => {
    expect(pathsOf('', ['rec_%ED%A0%80'], ['id'])).toEqual([['path', 'id']]);
    expect(pathsOf('', ['usr_ok', 'x%FF'], ['id', 'other'])).toEqual([['path', 'other']]);
    expect(pathsOf('', ['usr_%C3%A9', '%25FF'], ['id', 'other'])).toEqual([]);
  });
});
